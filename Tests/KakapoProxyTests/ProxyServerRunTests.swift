import Foundation
import Kakapo
import KakapoTestSupport
import Testing

@Suite("ProxyServer.run")
struct ProxyServerRunTests {
    @Test("run serves until its task is cancelled, then shuts down and returns the summary")
    func runUntilCancelled() async throws {
        let server = try ProxyServer(configuration: ProxyConfiguration(port: 0, mode: .replay))
        server.router.get("/hello") { _ in Response(statusCode: 200, body: "hi") }
        let running = Task { try await server.run(port: 0) }
        var port: Int?
        for _ in 0..<500 where port == nil {
            port = server.port
            if port == nil { try await Task.sleep(for: .milliseconds(10)) }
        }
        let bound = try #require(port)
        let client = try TestClient(port: bound)
        let answer = try await client.send(.get, "/hello")
        #expect(answer.status == 200)
        client.shutdown()
        let cancelled = ContinuousClock.now
        running.cancel()
        let summary = try await running.value
        #expect(ContinuousClock.now - cancelled < .seconds(5))
        #expect(summary.counts[.route] == 1)
        #expect(server.port == nil)
    }
}
