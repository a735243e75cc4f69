import Foundation
import KakapoHTTP
import KakapoTestSupport
import Testing

/// Server-sent events: streamed through while recording, stored one event per chunk with its offset,
/// replayed with the recorded gaps or back to back.
@Suite("Server-sent events")
struct EventStreamTests {
    /// When each of `count` events (`data: event N`) arrived, in milliseconds after the request was sent
    /// and as instants, and the whole text. The blocking reads run on a thread of their own, not the test
    /// pool's.
    static func readEvents(port: Int, path: String = "/events", prefix: String = "data: event", count: Int) async
        -> (arrivals: [Double], instants: [ContinuousClock.Instant], text: String)
    {
        await withCheckedContinuation { continuation in
            Thread {
                continuation.resume(
                    returning: blockingReadEvents(port: port, path: path, prefix: prefix, count: count))
            }.start()
        }
    }

    private static func blockingReadEvents(port: Int, path: String, prefix: String, count: Int) -> (
        arrivals: [Double], instants: [ContinuousClock.Instant], text: String
    ) {
        let started = ContinuousClock.now
        var arrivals: [Double] = []
        var instants: [ContinuousClock.Instant] = []
        let connection = try? RawConnection(port: port, timeout: 10)
        connection?.send("GET \(path) HTTP/1.1\r\nHost: localhost\r\n\r\n")
        let (text, _) =
            connection?.receive { text in
                while arrivals.count < count && text.contains("\(prefix) \(arrivals.count)") {
                    let now = ContinuousClock.now
                    instants.append(now)
                    arrivals.append((now - started) / .milliseconds(1))
                }
                return text.hasSuffix("\r\n0\r\n\r\n")
            } ?? ("", true)
        return (arrivals, instants, text)
    }

    @Test(
        "5 events 200 ms apart: streamed through record as they come, stored as 5 chunks, replayed with the gaps or at once"
    )
    func recordAndReplay() async throws {
        let cassette = try Fixtures.temporaryDirectory() + "/events.json"
        let events = (0..<5).map { Array("id: \($0)\ndata: event \($0)\n\n".utf8) }
        let upstream = try await TestUpstream.start { _ in
            .paced(
                headers: ["Content-Type": "text/event-stream", "Cache-Control": "no-cache"], chunks: events, gap: 0.2)
        }
        let recorder = try KakapoProcess([
            "record", "--upstream", upstream.baseURL, "--cassette", cassette, "--port", "0",
        ])
        let port = try await recorder.waitUntilListening()
        let recorded = await Self.readEvents(port: port, count: 5)
        #expect(recorded.arrivals.count == 5, "\(recorded.text)")
        // Each event reaches the client within 100 ms of the upstream writing it, long before the next one.
        let sent = upstream.pacedSends
        #expect(sent.count == 5)
        for (index, (arrival, sending)) in zip(recorded.instants, sent).enumerated() {
            let delay = (arrival - sending) / .milliseconds(1)
            #expect(delay >= 0 && delay < 100, "event \(index) arrived \(delay) ms after it was sent")
        }
        #expect(recorded.text.contains("X-Kakapo-Source: upstream"))
        recorder.send(SIGINT)
        #expect(try await recorder.waitForExit() == 0)
        await upstream.stop()

        let document = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: cassette)))
        let interaction = try #require(((document as? [String: Any])?["interactions"] as? [[String: Any]])?.first)
        let response = try #require(interaction["response"] as? [String: Any])
        let chunks = try #require(response["chunks"] as? [[String: Any]])
        #expect(response["body"] == nil)
        #expect(chunks.count == 5)
        #expect(chunks.compactMap { $0["text"] as? String } == events.map { String(decoding: $0, as: UTF8.self) })
        let offsets = chunks.compactMap { ($0["offsetMs"] as? NSNumber)?.doubleValue }
        #expect(offsets.first == 0)
        for (index, offset) in offsets.enumerated().dropFirst() {
            #expect(abs(offset - Double(200 * index)) < 100, "chunk \(index) at \(offset) ms")
        }

        // Editing an event in the file changes what is replayed.
        var text = try String(contentsOfFile: cassette, encoding: .utf8)
        text = text.replacingOccurrences(of: "data: event 4\\n\\n", with: "data: event 4 (edited)\\n\\n")
        try text.write(toFile: cassette, atomically: true, encoding: .utf8)

        let timed = try KakapoProcess(["replay", "--cassette", cassette, "--port", "0"])
        let replayed = await Self.readEvents(port: try await timed.waitUntilListening(), count: 5)
        #expect(replayed.arrivals.count == 5, "\(replayed.text)")
        for (index, arrival) in replayed.arrivals.enumerated() {
            // Generous bounds: the recorded gaps are 200 ms.
            #expect(
                arrival > Double(200 * index) - 60 && arrival < Double(200 * index) + 400,
                "event \(index) at \(arrival) ms")
        }
        #expect(replayed.text.contains("data: event 4 (edited)\n\n"))
        #expect(replayed.text.contains("X-Kakapo-Source: cassette"))
        timed.send(SIGINT)
        #expect(try await timed.waitForExit() == 0)

        let immediate = try KakapoProcess(["replay", "--cassette", cassette, "--stream-timing", "none", "--port", "0"])
        let atOnce = await Self.readEvents(port: try await immediate.waitUntilListening(), count: 5)
        #expect(atOnce.arrivals.count == 5)
        #expect((atOnce.arrivals.last ?? 1000) < 150, "\(atOnce.arrivals)")
        immediate.send(SIGINT)
        #expect(try await immediate.waitForExit() == 0)
    }

    @Test("a malformed chunk is refused with its place in the file; --stream-timing takes recorded or none")
    func badInput() async throws {
        let cassette = try Fixtures.temporaryDirectory() + "/bad.json"
        try """
        {"version": 1, "interactions": [{"request": {"method": "GET", "url": "/events"},
          "response": {"status": 200, "chunks": [{"text": "data: x\\n\\n"}]}}]}
        """.write(toFile: cassette, atomically: true, encoding: .utf8)
        let bad = try await KakapoProcess.run(["replay", "--cassette", cassette, "--port", "0"])
        #expect(bad.status == 3)
        #expect(
            bad.error.contains(":2:42: a chunk needs \"offsetMs\"") && bad.error.contains("/response/chunks/0"),
            "\(bad.error)")
        let flag = try await KakapoProcess.run([
            "replay", "--cassette", cassette, "--stream-timing", "sometimes", "--port", "0",
        ])
        #expect(flag.status == 2)
        #expect(flag.error.contains("--stream-timing"))

        // Pieces whose offsets go back in time: replay sent only the last piece in time.
        try """
        {"version": 1, "interactions": [{"request": {"method": "GET", "url": "/events"},
          "response": {"status": 200, "chunks": [{"offsetMs": 500, "text": "a"}, {"offsetMs": 5, "text": "b"}]}}]}
        """.write(toFile: cassette, atomically: true, encoding: .utf8)
        let backwards = try await KakapoProcess.run(["replay", "--cassette", cassette, "--port", "0"])
        #expect(backwards.status == 3, "\(backwards.error)")
        #expect(
            backwards.error.contains("must be no earlier than the chunk before (500), not 5")
                && backwards.error.contains("/response/chunks/1/offsetMs"), "\(backwards.error)")
    }
}
