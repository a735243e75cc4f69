import Foundation
import KakapoTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `--record-broken-streams`: an event stream the upstream breaks off is recorded with the chunks that came
/// and replayed as the same break; without the flag it is not recorded.
@Suite("Broken streams")
struct BrokenStreamTests {
    /// An upstream on a loopback port that answers every request with a chunked head of `contentType` and
    /// two events 200 ms apart (a pause long enough to make pieces of any answer), then closes the
    /// connection without the last chunk.
    final class BreakingUpstream: Sendable {
        let port: Int
        private let listener: Int32

        static let events = ["data: one\n\n", "data: two\n\n"]

        init(contentType: String = "text/event-stream") throws {
            let (listener, port) = try LoopbackSocket.bound(listening: 8)
            self.port = port
            self.listener = listener
            Thread {
                // Ends when `stop` shuts the listener down; at most 16 connections.
                for _ in 0..<16 {
                    let connection = accept(listener, nil, nil)
                    guard connection >= 0 else { return }
                    Self.answer(connection, contentType: contentType)
                }
            }.start()
        }

        var baseURL: String { "http://127.0.0.1:\(port)" }

        func stop() { shutdown(listener, Int32(SHUT_RDWR)) }

        deinit { close(listener) }

        private static func answer(_ connection: Int32, contentType: String) {
            defer { close(connection) }
            var request: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 4096)
            while request.count < 65536, !String(decoding: request, as: UTF8.self).contains("\r\n\r\n") {
                let count = read(connection, &buffer, buffer.count)
                guard count > 0 else { return }
                request += buffer[0..<count]
            }
            func write(_ text: String) {
                _ = text.utf8CString.withUnsafeBufferPointer { send(connection, $0.baseAddress, $0.count - 1, 0) }
            }
            write("HTTP/1.1 200 OK\r\nContent-Type: \(contentType)\r\nTransfer-Encoding: chunked\r\n\r\n")
            for event in events {
                usleep(200_000)
                write(String(event.utf8.count, radix: 16) + "\r\n" + event + "\r\n")
            }
            usleep(50_000)
        }
    }

    /// Runs curl on `url` and returns its exit status and what it printed.
    static func curl(_ url: String) async throws -> (status: Int32, output: String, error: String) {
        try await KakapoProcess.run(["-sSN", "--max-time", "20", url], executable: "/usr/bin/curl")
    }

    @Test(
        "recorded with the flag as two chunks and brokenOff, replayed to curl as the same break (exit 18)",
        arguments: ["text/event-stream", "text/plain"])
    func recordedAndReplayed(contentType: String) async throws {
        let cassette = try Fixtures.temporaryDirectory() + "/broken.json"
        let upstream = try BreakingUpstream(contentType: contentType)
        let recorder = try KakapoProcess([
            "record", "--upstream", upstream.baseURL, "--cassette", cassette, "--record-broken-streams",
            "--port", "0",
        ])
        let port = try await recorder.waitUntilListening()
        // The client of the recording run sees the break as it happened.
        let live = try await Self.curl("http://127.0.0.1:\(port)/events")
        #expect(live.status == 18, "\(live)")
        #expect(live.output == BreakingUpstream.events.joined(), "\(live)")
        recorder.send(SIGINT)
        #expect(try await recorder.waitForExit() == 0)
        #expect(recorder.standardError.contains("recorded with the break after 2 chunks"), "\(recorder.standardError)")
        upstream.stop()

        let document = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: cassette)))
        let interaction = try #require(((document as? [String: Any])?["interactions"] as? [[String: Any]])?.first)
        let response = try #require(interaction["response"] as? [String: Any])
        #expect(response["brokenOff"] as? Bool == true)
        let chunks = try #require(response["chunks"] as? [[String: Any]])
        #expect(chunks.compactMap { $0["text"] as? String } == BreakingUpstream.events)
        let offsets = chunks.compactMap { ($0["offsetMs"] as? NSNumber)?.doubleValue }
        try #require(offsets.count == 2, "\(offsets)")
        #expect(offsets[0] == 0 && offsets[1] > 100, "\(offsets)")
        let shown = try await KakapoProcess.run(["cassette", "show", cassette]).output
        #expect(shown.contains(" B in 2 chunks, broken off\t\(contentType)\t"), "\(shown)")

        // The upstream is gone: the replay breaks off after the second chunk, at the recorded pace.
        let replayer = try KakapoProcess(["replay", "--cassette", cassette, "--port", "0"])
        let replayPort = try await replayer.waitUntilListening()
        let started = ContinuousClock.now
        let replayed = try await Self.curl("http://127.0.0.1:\(replayPort)/events")
        #expect(ContinuousClock.now - started >= .milliseconds(Int64(offsets[1])))
        #expect(replayed.status == 18, "\(replayed)")
        #expect(replayed.error.contains("transfer closed with outstanding read data remaining"), "\(replayed)")
        #expect(replayed.output == BreakingUpstream.events.joined(), "\(replayed)")
        // The connection is closed, and the server goes on answering.
        let again = try await Self.curl("http://127.0.0.1:\(replayPort)/events")
        #expect(again.status == 18 && again.output == BreakingUpstream.events.joined(), "\(again)")
        replayer.send(SIGINT)
        #expect(try await replayer.waitForExit() == 0)
    }

    @Test("without the flag a broken stream is not recorded, and the log says how to record it")
    func notRecordedWithoutTheFlag() async throws {
        let cassette = try Fixtures.temporaryDirectory() + "/broken.json"
        let upstream = try BreakingUpstream()
        let recorder = try KakapoProcess([
            "record", "--upstream", upstream.baseURL, "--cassette", cassette, "--port", "0",
        ])
        let port = try await recorder.waitUntilListening()
        let live = try await Self.curl("http://127.0.0.1:\(port)/events")
        #expect(live.status == 18 && live.output == BreakingUpstream.events.joined(), "\(live)")
        recorder.send(SIGINT)
        #expect(try await recorder.waitForExit() == 0)
        upstream.stop()
        #expect(
            recorder.standardError.contains("not recorded (--record-broken-streams records it with the break)"),
            "\(recorder.standardError)")
        // No cassette, or one without interactions.
        if let data = FileManager.default.contents(atPath: cassette) {
            let document = try JSONSerialization.jsonObject(with: data)
            #expect(((document as? [String: Any])?["interactions"] as? [Any])?.isEmpty == true)
        }
    }
}
