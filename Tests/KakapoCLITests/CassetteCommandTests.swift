import Foundation
import Kakapo
import KakapoTestSupport
import Testing

@Suite("kakapo cassette")
struct CassetteCommandTests {
    /// A cassette written with redaction off, so it holds live credentials.
    static func leakyCassette() throws -> String {
        let path = try Fixtures.temporaryDirectory() + "/leaky.json"
        let cassette = Cassette(interactions: [
            Interaction(
                request: HTTP.Request(
                    method: .get, target: "/me?api_key=abcdef123",
                    headers: HTTP.Headers([("Host", "api.test"), ("Authorization", "Bearer eyJhbGciOiJIUzI1NiJ9")])),
                response: HTTP.Response(
                    status: 200, headers: ["Content-Type": "application/json"],
                    body: Array(#"{"token":"Bearer eyJhbGciOiJIUzI1NiJ9"}"#.utf8)),
                recordedAt: "2026-11-22T00:00:00.000Z", durationMilliseconds: 1)
        ])
        try CassetteFile.save(cassette, to: path)
        return path
    }

    @Test("lint finds credentials with file, line and column, and exits 1; a clean cassette exits 0")
    func lint() async throws {
        let leaky = try Self.leakyCassette()
        let result = try await KakapoProcess.run(["cassette", "lint", leaky])
        #expect(result.status == 1)
        #expect(
            result.error.contains("leaky.json:10:11: credential in request header Authorization"), "\(result.error)")
        #expect(result.error.contains("credential in a query parameter"))
        #expect(result.error.contains("bearer token in the response body"))

        let clean = try await KakapoProcess.run(["cassette", "lint", CLITests.demoCassette])
        #expect(clean.status == 0)
        #expect(clean.output.contains("4 interactions, no credentials found"))
    }

    @Test("lint exits 3 naming the file and line of a malformed cassette")
    func lintMalformed() async throws {
        let bad = try Fixtures.temporaryDirectory() + "/bad.json"
        try "{\"version\": 1,\n \"interactions\": [}\n".write(toFile: bad, atomically: true, encoding: .utf8)
        let result = try await KakapoProcess.run(["cassette", "lint", bad, CLITests.demoCassette])
        #expect(result.status == 3)
        #expect(result.error.contains("bad.json:2:19: "), "\(result.error)")
        #expect(result.output.contains("demo.json: 4 interactions"), "the other files are still checked")
    }

    @Test("redact applies today's rules in place, atomically, and lint then passes")
    func redact() async throws {
        let leaky = try Self.leakyCassette()
        let result = try await KakapoProcess.run(["cassette", "redact", leaky])
        #expect(result.status == 0)
        #expect(result.output.contains("Authorization ×1") && result.output.contains("api_key ×1"), "\(result.output)")
        let text = try String(contentsOfFile: leaky, encoding: .utf8)
        #expect(!text.contains("eyJhbGciOiJIUzI1NiJ9") && !text.contains("abcdef123"))
        #expect(try await KakapoProcess.run(["cassette", "lint", leaky]).status == 0)
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: (leaky as NSString).deletingLastPathComponent) == [
                "leaky.json"
            ])
    }

    @Test("show lists one line per interaction")
    func show() async throws {
        let result = try await KakapoProcess.run(["cassette", "show", CLITests.demoCassette])
        #expect(result.status == 0)
        let lines = result.output.split(separator: "\n")
        #expect(lines.count == 4)
        #expect(lines[1].hasPrefix("#1\tGET\t/users/1\t200\t72 B\tapplication/json\t127.0.0.1:9400\t"))
        let missing = try await KakapoProcess.run(["cassette", "show", "/nonexistent.json"])
        #expect(missing.status == 3)
    }

    @Test("--verbose logs each request with its source, and never a credential")
    func verboseLogging() async throws {
        let process = try KakapoProcess(["replay", "--cassette", CLITests.demoCassette, "--port", "0", "--verbose"])
        let client = try TestClient(port: try await process.waitUntilListening())
        _ = try await client.send(.get, "/users/1?token=supersecret")
        _ = try await client.send(.get, "/users/1")
        client.shutdown()
        process.send(SIGINT)
        #expect(try await process.waitForExit() == 0)
        #expect(process.standardError.contains("GET /users/1 -> 200 from cassette"))
        #expect(process.standardError.contains("GET /users/1?token=[REDACTED] -> 404 from miss"))
        #expect(!process.standardError.contains("supersecret"))
    }
}
