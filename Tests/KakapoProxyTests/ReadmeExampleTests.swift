import Foundation
import Kakapo
import KakapoTestSupport
import Testing

/// The README's "Override endpoints in Swift" snippet, compiled and run so it cannot rot: the same calls,
/// on a free port instead of 8080.
@Suite("README example")
struct ReadmeExampleTests {
    static let demoCassette =
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path + "/cassettes/demo.json"

    struct User: Storable, Codable {
        let id: String
        let name: String

        init(id: String, store: Store) {
            self.id = id
            self.name = "User \(id)"
        }
    }

    @Test("a route backed by the Store answers in front of the demo cassette, which replays the rest")
    func librarySnippet() async throws {
        let store = Store()
        store.create(User.self, number: 20)
        let server = try ProxyServer(cassette: Self.demoCassette, mode: .replay)
        server.router.get("/users/:id") { request in
            store.find(User.self, id: try request.parameters.require("id"))
        }
        let port = try await server.start(port: 0)
        let client = try TestClient(port: port)
        let user = try await client.send(.get, "/users/3")
        #expect(user.status == 200 && user.text == #"{"id":"3","name":"User 3"}"#)
        #expect(user.headers["X-Kakapo-Source"] == "route")
        let list = try await client.send(.get, "/users")
        #expect(list.headers["X-Kakapo-Source"] == "cassette")
        #expect(list.text.contains("\"name\": \"Ada Lovelace\""))
        client.shutdown()
        let summary = await server.shutdown()
        #expect(summary.text.contains("replayed 1, missed 0"))
    }
}
