import Foundation
import Kakapo
import KakapoTestSupport
import Testing

/// `--max-age` on the command line.
@Suite("Command line: expiry")
struct ExpiryCommandTests {
    @Test("kakapo replay --max-age with --strict fails on a stale recording; a bad age is a usage error")
    func strictStale() async throws {
        let path = try Fixtures.temporaryDirectory() + "/old.json"
        let old = Interaction(
            request: HTTP.Request(method: .get, target: "/old", headers: ["Host": "api.test"]),
            response: HTTP.Response(status: 200, contentType: "text/plain", text: "recorded in 2020"),
            recordedAt: "2020-01-01T00:00:00.000Z", durationMilliseconds: 1)
        try CassetteFile.save(Cassette(interactions: [old]), to: path)

        let process = try KakapoProcess(["replay", "--cassette", path, "--max-age", "30d", "--strict", "--port", "0"])
        let client = try TestClient(port: try await process.waitUntilListening())
        #expect(try await client.send(.get, "/old").text == "recorded in 2020")
        client.shutdown()
        process.send(SIGINT)
        #expect(try await process.waitForExit() == 1)
        #expect(process.standardError.contains("1 stale recording was replayed (older than 30d):"))
        #expect(process.standardError.contains("stale: #0 GET /old (recorded 2020-01-01T00:00:00.000Z)"))
        #expect(process.standardError.contains("strict mode: 1 stale recording(s) replayed"))

        let relaxed = try KakapoProcess(["replay", "--cassette", path, "--max-age", "520w", "--strict", "--port", "0"])
        let second = try TestClient(port: try await relaxed.waitUntilListening())
        _ = try await second.send(.get, "/old")
        second.shutdown()
        relaxed.send(SIGINT)
        #expect(try await relaxed.waitForExit() == 0)

        let bad = try await KakapoProcess.run(["replay", "--cassette", path, "--max-age", "soon"])
        #expect(bad.status == 2)
        #expect(bad.error.contains("--max-age takes an age such as 30d"))
    }
}
