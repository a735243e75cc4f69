import Foundation
import Kakapo
import KakapoTestSupport
import Testing

/// The example executable the README shows, run as a process.
@Suite("Example server")
struct ExampleTests {
    @Test("overrides two endpoints with the Store and replays the rest of the demo cassette")
    func example() async throws {
        let process = try KakapoProcess(
            ["0", CLITests.demoCassette], executable: KakapoProcess.builtProduct("kakapo-example"))
        let client = try TestClient(port: try await process.waitUntilListening())
        let user = try await client.send(.get, "/users/3")
        #expect(user.text == #"{"id":"3","name":"User 3"}"#)
        #expect(user.headers["X-Kakapo-Source"] == "route")
        let created = try await client.send(.post, "/users", body: Array(#"{"name":"Ada"}"#.utf8))
        #expect(created.status == 201 && created.text == #"{"id":"20","name":"Ada"}"#)
        #expect(try await client.send(.get, "/users/20").text == #"{"id":"20","name":"Ada"}"#)
        let list = try await client.send(.get, "/users")
        #expect(list.headers["X-Kakapo-Source"] == "cassette")
        #expect(list.text.contains("Grace Hopper"))
        client.shutdown()
        process.send(SIGTERM)
        _ = try await process.waitForExit()
    }
}
