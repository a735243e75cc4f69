import Foundation
import KakapoTestSupport
import Testing

/// `--max-buffered-bodies`: the request-body bytes all clients together may hold in memory, from the
/// command line.
@Suite("Trust: the buffered-body budget from the command line")
struct TrustBodyBudgetCLITests {
    @Test("--max-buffered-bodies out of range is a usage error naming the flag", arguments: ["0", "-1", "1e9"])
    func outOfRange(value: String) async throws {
        let result = try await KakapoProcess.run(["serve", "--max-buffered-bodies", value, "--port", "0"])
        #expect(result.status == 2, "\(result.error)")
        #expect(result.error.contains("--max-buffered-bodies"), "\(result.error)")
    }

    @Test("a body past --max-buffered-bodies gets 503 with Retry-After; a smaller one is answered")
    func budget() async throws {
        let folder = try Fixtures.temporaryDirectory()
        let routes = folder + "/routes.json"
        try #"{"routes": [{"method": "POST", "path": "/upload", "response": {"json": {"ok": true}}}]}"#.write(
            toFile: routes, atomically: true, encoding: .utf8)
        let server = try KakapoProcess(["serve", "--routes", routes, "--port", "0", "--max-buffered-bodies", "4096"])
        let port = try await server.waitUntilListening()
        func post(_ size: Int) async throws -> String {
            let result = try await KakapoProcess.run(
                [
                    "--silent", "--max-time", "10", "--include", "--data-binary", String(repeating: "a", count: size),
                    "-H", "Content-Type: text/plain", "http://127.0.0.1:\(port)/upload",
                ], executable: "/usr/bin/curl")
            return result.output
        }
        let large = try await post(10_000)
        #expect(large.hasPrefix("HTTP/1.1 503"), "\(large)")
        #expect(large.lowercased().contains("retry-after: 1"), "\(large)")
        let small = try await post(1_000)
        #expect(small.hasPrefix("HTTP/1.1 200"), "\(small)")
        server.send(SIGINT)
        #expect(try await server.waitForExit() == 0)
    }
}
