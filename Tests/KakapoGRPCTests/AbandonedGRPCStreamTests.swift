import Foundation
import KakapoJSON
import KakapoTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A gRPC server stream the client cancels (HTTP/2 RST_STREAM CANCEL, as a Watch client does when it is
/// done): recorded with the messages that came, marked abandoned, and replayed as far as that, then held open
/// until the client cancels again. Needs grpcio (tools/grpc.sh install), like GRPCEndToEndTests.
@Suite("Cancelled gRPC server streams", .serialized, .enabled(if: GRPCPeer.isAvailable))
struct AbandonedGRPCStreamTests {
    static let fixtures = GRPCEndToEndTests.fixtures
    static let python = GRPCPeer.python

    /// Runs Fixtures/cancel_client.py: `StreamHellos` for `times` messages, cancelled after `keep`, with a
    /// deadline of `deadline` seconds; returns the replies and the call's code.
    static func cancel(port: Int, stubs: String, times: Int, keep: Int, deadline: Double = 30) async throws
        -> (replies: [String], code: String)
    {
        let result = try await KakapoProcess.run(
            [fixtures + "/cancel_client.py", stubs, "127.0.0.1:\(port)", "\(times)", "\(keep)", "\(deadline)"],
            executable: python)
        try #require(result.status == 0, "client: \(result.error)")
        let object = try #require(try JSONParser.parse(Array(result.output.utf8)).objectValue, "\(result.output)")
        return (
            (object["replies"]?.arrayValue ?? []).compactMap(\.stringValue), object["code"]?.stringValue ?? "?"
        )
    }

    @Test("a server stream cancelled after 3 messages is recorded with them, abandoned, and replayed then held")
    func recordedAndReplayed() async throws {
        let stubs = try await GRPCEndToEndTests.generate()
        let cassette = stubs + "/cancelled.json"
        let server = try KakapoProcess([Self.fixtures + "/demo_server.py", stubs], executable: Self.python)
        defer { server.send(SIGKILL) }
        let upstreamPort = try await server.waitUntilListening()
        let recorder = try KakapoProcess([
            "record", "--cassette", cassette, "--upstream", "h2c://127.0.0.1:\(upstreamPort)", "--port", "0",
        ])
        let port = try await recorder.waitUntilListening()
        // 100 messages 50 ms apart: the service would go on for 5 s; the client stops after 3.
        let live = try await Self.cancel(port: port, stubs: stubs, times: 100, keep: 3)
        let expected = (1...3).map { "hello ada #\($0)/\($0)" }
        #expect(live.replies == expected && live.code == "CANCELLED", "\(live)")
        let deadline = ContinuousClock.now + .seconds(20)
        while !recorder.standardError.contains("recorded as abandoned") {
            try #require(ContinuousClock.now < deadline, "never recorded: \(recorder.standardError)")
            try await Task.sleep(for: .milliseconds(50))
        }
        recorder.send(SIGINT)
        #expect(try await recorder.waitForExit() == 0, "\(recorder.standardError)")
        server.send(SIGKILL)

        let document = try JSONParser.parse(Array(try #require(FileManager.default.contents(atPath: cassette))))
        let interaction = try #require(document.objectValue?["interactions"]?.arrayValue?.first?.objectValue)
        let response = try #require(interaction["response"]?.objectValue)
        #expect(response["abandoned"] == .bool(true), "\(response)")
        // The messages that came (those read, and perhaps a few on their way when the client left), each with
        // its offset; no status, as none came.
        let messages = try #require(response["grpc"]?.objectValue?["messages"]?.arrayValue, "\(response)")
        #expect(messages.count >= 3 && messages.count < 100, "\(messages.count)")
        #expect(messages.allSatisfy { $0.objectValue?["offsetMs"] != nil }, "\(messages)")
        #expect(response["trailers"] == nil, "\(response)")

        // The service is gone: the replay sends the recorded messages, then holds the call open.
        let replayer = try KakapoProcess(["replay", "--cassette", cassette, "--port", "0", "--stream-timing", "none"])
        let replayPort = try await replayer.waitUntilListening()
        let again = try await Self.cancel(port: replayPort, stubs: stubs, times: 100, keep: 3)
        #expect(again.replies == expected && again.code == "CANCELLED", "\(again)")
        // A client that waits for more than was recorded gets every recorded message and then nothing more
        // until its deadline: the call is held open, not ended (which grpcio would read as an error at once).
        let waiting = try await Self.cancel(
            port: replayPort, stubs: stubs, times: 100, keep: messages.count + 1, deadline: 2)
        #expect(waiting.replies.count == messages.count, "\(waiting)")
        #expect(waiting.code == "DEADLINE_EXCEEDED", "\(waiting)")
        replayer.send(SIGINT)
        #expect(try await replayer.waitForExit() == 0, "\(replayer.standardError)")
        #expect(replayer.standardError.contains("missed 0"), "\(replayer.standardError)")
    }
}
