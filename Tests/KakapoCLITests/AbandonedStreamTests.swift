import Foundation
import KakapoTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A stream the client abandons (it stops reading and closes its connection mid-way, as a user who stops an
/// LLM answer does): recorded as what arrived, marked `"abandoned": true`, and replayed up to that point and
/// then held open; with `--no-record-abandoned-streams` it is not recorded, and the log and the summary say so.
@Suite("Abandoned streams")
struct AbandonedStreamTests {
    static let events = (0..<20).map { "id: \($0)\ndata: event \($0)\n\n" }

    /// An upstream that sends `events` 300 ms apart: about six seconds, far longer than the client stays.
    static func pacedUpstream() async throws -> TestUpstream {
        try await TestUpstream.start { _ in
            .paced(
                headers: ["Content-Type": "text/event-stream", "Cache-Control": "no-cache"],
                chunks: events.map { Array($0.utf8) }, gap: 0.3)
        }
    }

    /// Reads `GET /events` on `port` until `count` whole events came, then closes the connection (abandons
    /// it) unless `keep`; returns what it read and whether the server had closed or ended the answer. The
    /// blocking reads run on a thread of their own, not the test pool's.
    static func readThenLeave(port: Int, count: Int, headers: String = "", timeout: Double = 20) async
        -> (text: String, closed: Bool)
    {
        await withCheckedContinuation { continuation in
            Thread {
                guard let connection = try? RawConnection(port: port, timeout: timeout) else {
                    continuation.resume(returning: ("", true))
                    return
                }
                connection.send(
                    "GET /events HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\n\(headers)\r\n")
                let last = "data: event \(count - 1)\n\n"
                let (text, closed) = connection.receive { $0.contains(last) || $0.hasSuffix("\r\n0\r\n\r\n") }
                connection.closeNow()
                continuation.resume(returning: (text, closed))
            }.start()
        }
    }

    /// The events in `text`, in order (`data: event N` lines).
    static func eventNumbers(in text: String) -> [Int] {
        text.split(separator: "\n").compactMap { line in
            line.hasPrefix("data: event ") ? Int(line.dropFirst("data: event ".count)) : nil
        }
    }

    /// Waits (up to 20 s, a guard against hangs only) until `process` has logged `text` on standard error.
    static func waitForLog(_ text: String, in process: KakapoProcess) async throws {
        let deadline = ContinuousClock.now + .seconds(20)
        while !process.standardError.contains(text) {
            try #require(ContinuousClock.now < deadline, "never logged \(text): \(process.standardError)")
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    /// The first interaction's response object in the cassette at `path`.
    static func recordedResponse(_ path: String) throws -> [String: Any]? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        let document = try JSONSerialization.jsonObject(with: data)
        let interactions = (document as? [String: Any])?["interactions"] as? [[String: Any]]
        return interactions?.first?["response"] as? [String: Any]
    }

    @Test("an SSE stream the client leaves after 3 events is recorded abandoned and replayed to that point, held open")
    func recordedAndReplayed() async throws {
        let cassette = try Fixtures.temporaryDirectory() + "/abandoned.json"
        let upstream = try await Self.pacedUpstream()
        let recorder = try KakapoProcess([
            "record", "--upstream", upstream.baseURL, "--cassette", cassette, "--port", "0",
        ])
        let port = try await recorder.waitUntilListening()
        let live = await Self.readThenLeave(port: port, count: 3)
        #expect(Self.eventNumbers(in: live.text) == [0, 1, 2], "\(live.text)")
        // The recording is made when the client leaves, not when the upstream ends.
        try await Self.waitForLog("recorded as abandoned", in: recorder)
        recorder.send(SIGINT)
        #expect(try await recorder.waitForExit() == 0, "\(recorder.standardError)")

        let response = try #require(try Self.recordedResponse(cassette), "\(recorder.standardError)")
        #expect(response["abandoned"] as? Bool == true, "\(response)")
        #expect(response["brokenOff"] == nil)
        let chunks = try #require(response["chunks"] as? [[String: Any]], "\(response)")
        let texts = chunks.compactMap { $0["text"] as? String }
        // What arrived before Kakapo heard the client leave: the three events read, and at most a few more
        // that were on their way (a loaded machine may be slow to notice), never the whole stream.
        #expect(texts.count >= 3 && texts.count < Self.events.count, "\(texts)")
        #expect(Array(texts.prefix(3)) == Array(Self.events.prefix(3)), "\(texts)")
        let shown = try await KakapoProcess.run(["cassette", "show", cassette]).output
        #expect(shown.contains("chunks, abandoned"), "\(shown)")

        // The upstream is gone: the replay sends what was recorded, back to back, then holds the stream open
        // (no final chunk, no close) as the upstream did when the client left.
        await upstream.stop()
        let replayer = try KakapoProcess([
            "replay", "--cassette", cassette, "--port", "0", "--stream-timing", "none",
        ])
        let replayPort = try await replayer.waitUntilListening()
        let replayed = await withCheckedContinuation { continuation in
            Thread {
                guard let connection = try? RawConnection(port: replayPort, timeout: 2) else {
                    continuation.resume(returning: (text: "", closed: true))
                    return
                }
                connection.send("GET /events HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\n\r\n")
                // Reads until the 2 s read timeout: a stream that ended or closed would return before.
                let result = connection.receive()
                connection.closeNow()
                continuation.resume(returning: result)
            }.start()
        }
        #expect(replayed.text.hasPrefix("HTTP/1.1 200"), "\(replayed.text)")
        #expect(Self.eventNumbers(in: replayed.text) == Array(0..<texts.count), "\(replayed.text)")
        #expect(!replayed.closed, "the replay closed the connection: \(replayed.text)")
        #expect(!replayed.text.hasSuffix("\r\n0\r\n\r\n"), "the replay ended the stream: \(replayed.text)")
        replayer.send(SIGINT)
        #expect(try await replayer.waitForExit() == 0, "\(replayer.standardError)")
        #expect(replayer.standardError.contains("replayed 1, missed 0"), "\(replayer.standardError)")
    }

    @Test("with --no-record-abandoned-streams it is not recorded; the log names the flag and the summary counts it")
    func notRecordedWhenTurnedOff() async throws {
        let cassette = try Fixtures.temporaryDirectory() + "/abandoned.json"
        let upstream = try await Self.pacedUpstream()
        let recorder = try KakapoProcess([
            "record", "--upstream", upstream.baseURL, "--cassette", cassette, "--port", "0",
            "--no-record-abandoned-streams",
        ])
        let port = try await recorder.waitUntilListening()
        let live = await Self.readThenLeave(port: port, count: 3)
        #expect(Self.eventNumbers(in: live.text) == [0, 1, 2], "\(live.text)")
        // Said at the default level (no -v), with the flag that would record it.
        try await Self.waitForLog("--record-abandoned-streams", in: recorder)
        recorder.send(SIGINT)
        #expect(try await recorder.waitForExit() == 0, "\(recorder.standardError)")
        #expect(
            recorder.standardError.contains("not recorded (--record-abandoned-streams records it"),
            "\(recorder.standardError)")
        #expect(
            recorder.standardError.contains(
                "not recorded: 1 (1 abandoned by the client, --no-record-abandoned-streams)"),
            "\(recorder.standardError)")
        await upstream.stop()
        if let response = try Self.recordedResponse(cassette) {
            Issue.record("recorded anyway: \(response)")
        }
    }

    /// curl with `arguments`; its output.
    static func curl(_ arguments: [String]) async throws -> String {
        try await KakapoProcess.run(["-sS", "--max-time", "20"] + arguments, executable: "/usr/bin/curl").output
    }

    @Test("a cassette session records a stream its client abandons, and replays it as far, held open")
    func inASession() async throws {
        let directory = try Fixtures.temporaryDirectory()
        let upstream = try await Self.pacedUpstream()
        let server = try KakapoProcess([
            "serve", "--upstream", upstream.baseURL, "--cassette-dir", directory, "--port", "0",
        ])
        let port = try await server.waitUntilListening()
        let admin = "http://127.0.0.1:\(port)/__kakapo/sessions"
        func open(_ mode: String) async throws -> String {
            let answer = try await Self.curl([
                "-X", "POST", "-H", "Content-Type: application/json", "--data",
                #"{"cassette": "sse.json", "mode": "\#(mode)"}"#, admin,
            ])
            let object = try JSONSerialization.jsonObject(with: Data(answer.utf8)) as? [String: Any]
            return try #require(object?["id"] as? String, "\(answer)")
        }
        let recording = try await open("new")
        let live = await Self.readThenLeave(port: port, count: 3, headers: "X-Kakapo-Session: \(recording)\r\n")
        #expect(Self.eventNumbers(in: live.text) == [0, 1, 2], "\(live.text)")
        try await Self.waitForLog("recorded as abandoned", in: server)
        _ = try await Self.curl(["-X", "DELETE", admin + "/" + recording])
        await upstream.stop()
        let response = try #require(try Self.recordedResponse(directory + "/sse.json"), "\(server.standardError)")
        #expect(response["abandoned"] as? Bool == true, "\(response)")
        let count = (response["chunks"] as? [Any])?.count ?? 0
        #expect(count >= 3 && count < Self.events.count, "\(response)")

        let replaying = try await open("none")
        let replayed = await Self.readThenLeave(
            port: port, count: count, headers: "X-Kakapo-Session: \(replaying)\r\n")
        #expect(replayed.text.contains("X-Kakapo-Source: cassette"), "\(replayed.text)")
        #expect(Self.eventNumbers(in: replayed.text) == Array(0..<count), "\(replayed.text)")
        #expect(!replayed.closed && !replayed.text.hasSuffix("\r\n0\r\n\r\n"), "\(replayed.text)")
        let closed = try await Self.curl(["-X", "DELETE", admin + "/" + replaying])
        let summary = try JSONSerialization.jsonObject(with: Data(closed.utf8)) as? [String: Any]
        #expect((summary?["misses"] as? [Any])?.isEmpty == true, "\(closed)")
        server.send(SIGINT)
        #expect(try await server.waitForExit() == 0, "\(server.standardError)")
    }
}
