// Serves the demo cassette with two endpoints overridden by live logic backed by a Store:
//   swift run kakapo-example [PORT] [CASSETTE]
// GET /users/:id answers from the Store, POST /users adds to it, everything else replays.
import Foundation
import Kakapo

struct User: Storable, Codable {
    let id: String
    let name: String

    init(id: String, store: Store) {
        self.id = id
        self.name = "User \(id)"
    }

    init(id: String, name: String) {
        self.id = id
        self.name = name
    }
}

struct NewUser: Decodable {
    let name: String
}

let arguments = CommandLine.arguments.dropFirst()
let port = arguments.first.flatMap { Int($0) } ?? 8080
let cassette = arguments.dropFirst().first ?? "cassettes/demo.json"

let store = Store()
store.create(User.self, number: 20)

let server = try ProxyServer(cassette: cassette, mode: .replay)
server.router.get("/users/:id") { request in
    store.find(User.self, id: try request.parameters.require("id"))
}
server.router.post("/users") { request in
    let body = try request.decode(NewUser.self)
    return Response(statusCode: 201, body: store.insert { id in User(id: id, name: body.name) })
}
// GET /users/3  -> 200 {"id":"3","name":"User 3"}   from the route and the Store
// GET /users    -> the recorded list                from the cassette

let bound = try await server.start(port: port)
FileHandle.standardOutput.write(Data("kakapo-example listening on http://127.0.0.1:\(bound)\n".utf8))
while true {
    try await Task.sleep(for: .seconds(3600))
}
