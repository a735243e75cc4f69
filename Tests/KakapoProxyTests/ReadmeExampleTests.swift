import Foundation
import Kakapo
import KakapoTestSupport
import Testing

/// The README's "From Swift" snippet, compiled and run so it cannot rot.
@Suite("README example")
struct ReadmeExampleTests {
    static let demoCassette =
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path + "/cassettes/demo.json"

    @Test("the library snippet serves the demo cassette")
    func librarySnippet() async throws {
        let server = try ProxyServer(
            configuration: ProxyConfiguration(port: 0, mode: .none, cassettePath: Self.demoCassette))
        let port = try await server.start()
        let client = try TestClient(port: port)
        let user = try await client.send(.get, "/users/1")
        #expect(user.status == 200)
        #expect(user.headers["X-Kakapo-Source"] == "cassette")
        #expect(user.text.contains("\"name\": \"Ada Lovelace\""))
        client.shutdown()
        let summary = await server.shutdown()
        #expect(summary.text.contains("replayed 1, missed 0"))
    }
}
