// One typed API for the demo API (tools/demo-api.py), used three ways with no change to the calls:
//   swift run kakapo-typed-client live http://127.0.0.1:9000   # the real API
//   swift run kakapo-typed-client stubbed                      # sample data, no network
//   swift run kakapo-typed-client cassette cassettes/demo.json # Kakapo in process, from a recording
import Foundation
import Kakapo

/// The demo API's endpoints.
enum DemoAPI: Endpoint {
    case users
    case user(id: String)
    case createUser(name: String, email: String)

    var baseURL: URL { URL(string: liveAPI)! }

    var path: String {
        switch self {
        case .users, .createUser: return "/users"
        case .user(let id): return "/users/\(id)"
        }
    }

    var method: EndpointMethod {
        if case .createUser = self { return .post }
        return .get
    }

    var task: EndpointTask {
        if case .createUser(let name, let email) = self { return .json(["name": name, "email": email]) }
        return .plain
    }

    var validation: Validation { .successCodes }

    var sampleData: Data {
        switch self {
        case .users: return Data(#"[{"id": "1", "name": "Sample User", "email": "sample@example.com"}]"#.utf8)
        case .user(let id): return Data(#"{"id": "\#(id)", "name": "Sample User", "email": "sample@example.com"}"#.utf8)
        case .createUser(let name, let email):
            return Data(#"{"id": "99", "name": "\#(name)", "email": "\#(email)"}"#.utf8)
        }
    }
}

struct User: Decodable {
    let id: String
    let name: String
}

/// Runs the three calls the same way whatever answers them.
func show(_ client: Provider<DemoAPI>) async throws {
    let users = try await client.request(.users).decode([User].self)
    print("users: " + users.map(\.name).joined(separator: ", "))
    let first = try await client.request(.user(id: "1")).decode(User.self)
    print("user 1: \(first.name)")
    do {
        _ = try await client.request(.user(id: "42"))
        print("user 42: found")
    } catch {
        print("user 42: \(error.response.map { "status \($0.statusCode)" } ?? "\(error)")")
    }
}

let arguments = Array(CommandLine.arguments.dropFirst())
/// The API `live` talks to (stubs and the cassette never reach it).
let liveAPI = arguments.first == "live" && arguments.count > 1 ? arguments[1] : "http://127.0.0.1:9000"
switch arguments.first ?? "stubbed" {
case "live":
    try await show(Provider())
case "cassette":
    let kakapo = try InProcessKakapo(cassette: arguments.count > 1 ? arguments[1] : "cassettes/demo.json")
    try await show(Provider(stubBehavior: .kakapo(kakapo)))
    await kakapo.shutdown()
default:
    try await show(Provider(stubBehavior: .immediate))
}
