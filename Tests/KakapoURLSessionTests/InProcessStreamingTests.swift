import Foundation
import Kakapo
import KakapoTestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Streams in process: a URLSession data task gets the pieces of an event stream as they come, while
/// recording and from the cassette, instead of waiting for the end.
@Suite("Kakapo in process: streams")
struct InProcessStreamingTests {
    /// A data task's pieces with the instant each arrived, and the instant it completed.
    final class Arrivals: NSObject, URLSessionDataDelegate, @unchecked Sendable {
        // @unchecked Sendable: everything is behind `lock`.
        private let lock = NSLock()
        private var pieces: [(at: ContinuousClock.Instant, data: Data)] = []
        private var finished: CheckedContinuation<(ContinuousClock.Instant, (any Error)?), Never>?

        func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
            lock.withLock { pieces.append((.now, data)) }
        }

        func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
            let finished = lock.withLock { () -> CheckedContinuation<(ContinuousClock.Instant, (any Error)?), Never>? in
                defer { self.finished = nil }
                return self.finished
            }
            finished?.resume(returning: (.now, error))
        }

        /// Runs a data task for `url` and returns its pieces, when it ended, and its error.
        static func load(_ url: URL, configuration: URLSessionConfiguration) async -> (
            pieces: [(at: ContinuousClock.Instant, data: Data)], end: ContinuousClock.Instant, error: (any Error)?
        ) {
            let arrivals = Arrivals()
            let session = URLSession(configuration: configuration, delegate: arrivals, delegateQueue: nil)
            let (end, error) = await withCheckedContinuation { continuation in
                arrivals.lock.withLock { arrivals.finished = continuation }
                session.dataTask(with: url).resume()
            }
            session.finishTasksAndInvalidate()
            return (arrivals.lock.withLock { arrivals.pieces }, end, error)
        }
    }

    @Test("record: the first event reaches the task long before the stream ends; replay keeps the gaps")
    func eventsAsTheyCome() async throws {
        let events = (0..<3).map { Array("data: tick \($0)\n\n".utf8) }
        let upstream = try await TestUpstream.start { _ in
            .paced(headers: ["Content-Type": "text/event-stream"], chunks: events, gap: 1.0)
        }
        let cassette = try Fixtures.temporaryDirectory() + "/stream.json"
        let url = try #require(URL(string: "http://api.test/ticks"))

        let recorder = try InProcessKakapo(cassette: cassette, mode: .new, upstream: upstream.baseURL)
        let recorded = await Arrivals.load(url, configuration: recorder.sessionConfiguration())
        #expect(recorded.error == nil)
        #expect(recorded.pieces.map(\.data).reduce(Data(), +) == Data(events.joined()))
        // Sent at 1, 2 and 3 s: the first piece is there about 2 s before the end. The bound is half that, so
        // a loaded machine that delivers the first piece late (0.3 s gaps were once read 0.3 s apart) still
        // passes, and a stream held back until its end (no gap at all) still fails.
        let firstEarly = try #require(recorded.pieces.first).at
        #expect(recorded.end - firstEarly > .milliseconds(1000), "\(recorded.pieces.map(\.at))")
        let summary = await recorder.shutdown()
        #expect(summary.recorded == 1)
        // `answer(_:)` waits for a live stream and gives it whole.
        let passthrough = try InProcessKakapo(mode: .passthrough, upstream: upstream.baseURL)
        let whole = await passthrough.pipeline.answer(HTTP.Request(method: .get, target: "/ticks"))
        #expect(whole.response?.body == Array(events.joined()))
        await passthrough.shutdown()
        await upstream.stop()
        #expect(try CassetteFile.load(cassette).interactions.first?.chunks?.count == 3)

        let replayer = try InProcessKakapo(cassette: cassette)
        let replayed = await Arrivals.load(url, configuration: replayer.sessionConfiguration())
        #expect(replayed.error == nil)
        #expect(replayed.pieces.map(\.data).reduce(Data(), +) == Data(events.joined()))
        let first = try #require(replayed.pieces.first).at
        #expect(replayed.end - first > .milliseconds(1000), "\(replayed.pieces.map(\.at))")
        // ... and a recorded one at once, whole.
        let recordedWhole = await replayer.pipeline.answer(HTTP.Request(method: .get, target: "/ticks"))
        #expect(recordedWhole.response?.body == Array(events.joined()))
        await replayer.shutdown()
    }
}
