import Foundation
import Kakapo
import KakapoTestSupport
import Testing

/// `--mode once`, VCR's default: record everything when the cassette does not exist, replay only when it does.
@Suite("Command line: mode once")
struct OnceModeTests {
    @Test("records when the cassette is missing; then replays only, a miss stays a miss and the file is unchanged")
    func recordThenReplay() async throws {
        let cassette = try Fixtures.temporaryDirectory() + "/once.json"
        let upstream = try await CLITests.upstream()
        let recorder = try KakapoProcess([
            "record", "--mode", "once", "--upstream", upstream.baseURL, "--cassette", cassette, "--port", "0",
        ])
        let client = try TestClient(port: try await recorder.waitUntilListening())
        #expect(try await client.send(.get, "/a").headers["X-Kakapo-Source"] == "upstream")
        #expect(try await client.send(.get, "/b").headers["X-Kakapo-Source"] == "upstream")
        client.shutdown()
        recorder.send(SIGINT)
        #expect(try await recorder.waitForExit() == 0)
        #expect(recorder.standardError.contains("does not exist yet, recording everything"))
        #expect(recorder.standardError.contains("recorded 2 interactions"))
        await upstream.stop()
        let saved = try Data(contentsOf: URL(fileURLWithPath: cassette))

        let replay = try KakapoProcess(["serve", "--mode", "once", "--cassette", cassette, "--port", "0"])
        let second = try TestClient(port: try await replay.waitUntilListening())
        let hit = try await second.send(.get, "/a")
        #expect(hit.headers["X-Kakapo-Source"] == "cassette")
        #expect(hit.text == #"{"path":"/a"}"#)
        let miss = try await second.send(.get, "/c")
        #expect(miss.status == 404)
        #expect(miss.headers["X-Kakapo-Source"] == "miss")
        second.shutdown()
        replay.send(SIGINT)
        #expect(try await replay.waitForExit() == 0)
        #expect(replay.standardError.contains("exists, replaying only"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: cassette)) == saved)
    }

    @Test("without an upstream, a missing cassette is a clear error at start (exit 3)")
    func needsUpstreamToRecord() async throws {
        let cassette = try Fixtures.temporaryDirectory() + "/missing.json"
        let result = try await KakapoProcess.run(["serve", "--mode", "once", "--cassette", cassette, "--port", "0"])
        #expect(result.status == 3)
        #expect(
            result.error.contains("mode 'once' records because \(cassette) does not exist yet, so it needs an upstream")
        )
        #expect(!FileManager.default.fileExists(atPath: cassette))
    }
}
