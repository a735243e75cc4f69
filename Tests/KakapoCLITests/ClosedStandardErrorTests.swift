import Foundation
import KakapoTestSupport
import Testing

/// A parent that stops reading Kakapo's standard error (a test runner that closed its pipe, `2>&1 | head`)
/// costs the log lines only: the recording is still saved on SIGINT, and the exit status is 0.
@Suite("A closed standard error")
struct ClosedStandardErrorTests {
    @Test("kakapo record whose standard error nobody reads saves its recording on SIGINT and exits 0")
    func recordingSurvivesAClosedStandardError() async throws {
        let upstream = try await CLITests.upstream()
        let directory = try Fixtures.temporaryDirectory()
        let cassette = directory + "/api.json"
        // Standard error is a pipe whose reader (`true`) ends at once: each write to it fails with EPIPE.
        let process = try KakapoProcess(
            [
                "-c", #"exec "$0" record --upstream "$1" --cassette "$2" --port 0 2> >(exec true)"#,
                KakapoProcess.binary, "http://127.0.0.1:\(upstream.port)", cassette,
            ], executable: "/bin/bash")
        let port = try await process.waitUntilListening()
        let client = try TestClient(port: port)
        let answer = try await client.send(.get, "/users/7")
        #expect(answer.status == 200 && answer.text.contains("/users/7"))
        client.shutdown()
        process.send(SIGINT)
        #expect(try await process.waitForExit() == 0)
        let saved = try String(contentsOfFile: cassette, encoding: .utf8)
        #expect(saved.contains("/users/7"))
        await upstream.stop()
    }
}
