import Foundation
import KakapoTestSupport
import Testing

/// `--stream-timing` speeds: an event stream recorded from a real upstream, replayed by the built binary
/// four times as fast, at half speed and back to back, with flags that are no speed refused.
@Suite("Stream timing speeds")
struct StreamSpeedTests {
    @Test("5 events 200 ms apart replay at 4x in about 200 ms and at 0.5x in about 1.6 s, never early")
    func speeds() async throws {
        let cassette = try Fixtures.temporaryDirectory() + "/events.json"
        let events = (0..<5).map { Array("id: \($0)\ndata: event \($0)\n\n".utf8) }
        let upstream = try await TestUpstream.start { _ in
            .paced(headers: ["Content-Type": "text/event-stream"], chunks: events, gap: 0.2)
        }
        let recorder = try KakapoProcess([
            "record", "--upstream", upstream.baseURL, "--cassette", cassette, "--port", "0",
        ])
        let recorded = await EventStreamTests.readEvents(port: try await recorder.waitUntilListening(), count: 5)
        #expect(recorded.arrivals.count == 5, "\(recorded.text)")
        recorder.send(SIGINT)
        #expect(try await recorder.waitForExit() == 0)
        await upstream.stop()

        let document = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: cassette)))
        let interaction = try #require(((document as? [String: Any])?["interactions"] as? [[String: Any]])?.first)
        let chunks = try #require((interaction["response"] as? [String: Any])?["chunks"] as? [[String: Any]])
        let offsets = chunks.compactMap { ($0["offsetMs"] as? NSNumber)?.doubleValue }
        #expect(offsets.count == 5)
        #expect((offsets.last ?? 0) > 700, "\(offsets)")

        for (speed, factor, slack) in [("4x", 4.0, 400.0), ("0.5x", 0.5, 700.0)] {
            let replayer = try KakapoProcess([
                "replay", "--cassette", cassette, "--stream-timing", speed, "--port", "0",
            ])
            let replayed = await EventStreamTests.readEvents(port: try await replayer.waitUntilListening(), count: 5)
            #expect(replayed.arrivals.count == 5, "\(speed): \(replayed.text)")
            for (index, (arrival, offset)) in zip(replayed.arrivals, offsets).enumerated() {
                // Timed from the request: an event can never come before its scaled offset (0.1 ms for the
                // cassette's rounding), however loaded the machine; late is bounded generously.
                let due = offset / factor
                #expect(arrival >= due - 0.1, "\(speed): event \(index) at \(arrival) ms, due at \(due) ms")
                #expect(arrival < due + slack, "\(speed): event \(index) at \(arrival) ms, due at \(due) ms")
            }
            replayer.send(SIGINT)
            #expect(try await replayer.waitForExit() == 0)
        }

        let immediate = try KakapoProcess(["replay", "--cassette", cassette, "--stream-timing", "none", "--port", "0"])
        let atOnce = await EventStreamTests.readEvents(port: try await immediate.waitUntilListening(), count: 5)
        #expect(atOnce.arrivals.count == 5)
        #expect((atOnce.arrivals.last ?? 1000) < 150, "\(atOnce.arrivals)")
        immediate.send(SIGINT)
        #expect(try await immediate.waitForExit() == 0)
    }

    @Test("a speed out of range, not a number or not written as a plain decimal is a usage error naming the flag")
    func badSpeeds() async throws {
        let cassette = try Fixtures.temporaryDirectory() + "/empty.json"
        try #"{"version": 1, "interactions": []}"#.write(toFile: cassette, atomically: true, encoding: .utf8)
        for value in ["0x", "0.001x", "1001x", "nanx", "infx", "-2x", "1e2x", "0x10x", "4", "x", "fast"] {
            let result = try await KakapoProcess.run([
                "replay", "--cassette", cassette, "--stream-timing=\(value)", "--port", "0",
            ])
            #expect(result.status == 2, "\(value): \(result.error)")
            #expect(
                result.error.contains("--stream-timing takes recorded, none or a speed from 0.01x to 1000x"),
                "\(value): \(result.error)")
        }
    }
}
