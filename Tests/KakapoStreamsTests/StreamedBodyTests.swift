import Foundation
import KakapoCassette
import Synchronization
import Testing

@testable import KakapoStreams

/// A recorded stream delivered without a socket: in order, with its gaps or at once, and cancellable.
@Suite("Streamed bodies")
struct StreamedBodyTests {
    /// Delivers `body` and returns each event with when it came, once the end is reached.
    static func collect(_ body: StreamedBody) async -> [(ms: Double, event: String)] {
        let events = Mutex<[(ms: Double, event: String)]>([])
        let started = ContinuousClock.now
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = Atomic<Bool>(false)
            body.deliver { event in
                let ms = (ContinuousClock.now - started) / .milliseconds(1)
                let text: String
                switch event {
                case .data(let bytes): text = String(decoding: bytes, as: UTF8.self)
                case .end: text = "end"
                case .broken: text = "broken"
                }
                events.withLock { $0.append((ms, text)) }
                if text == "end" || text == "broken" {
                    if !done.exchange(true, ordering: .relaxed) { continuation.resume() }
                }
            }
        }
        return events.withLock { $0 }
    }

    static let chunks = (0..<50).map {
        ResponseChunk(offsetMilliseconds: Double($0 / 10) * 100, bytes: Array("\($0),".utf8))
    }

    @Test("chunks come in order even when offsets repeat, with their gaps when timed and at once otherwise")
    func orderAndTiming() async {
        let timed = await Self.collect(StreamedBody(recorded: Self.chunks, timing: .recorded))
        #expect(timed.map(\.event) == Self.chunks.map { String(decoding: $0.bytes, as: UTF8.self) } + ["end"])
        // The last ten chunks are recorded at 400 ms.
        #expect((timed.dropLast().last?.ms ?? 0) >= 390, "\(timed.map(\.ms))")
        let immediate = await Self.collect(StreamedBody(recorded: Self.chunks, timing: .none))
        #expect(immediate.map(\.event) == timed.map(\.event))
        #expect((immediate.last?.ms ?? 1000) < 300, "\(immediate.map(\.ms))")
    }

    @Test("a cancelled body delivers nothing more")
    func cancellation() async throws {
        let body = StreamedBody(recorded: Self.chunks, timing: .recorded)
        let delivered = Mutex(0)
        body.deliver { _ in
            // Given up from the third piece on (the first ten are all at 0 ms).
            if delivered.withLock({ count in
                count += 1
                return count
            }) == 3 {
                body.cancel()
            }
        }
        // Past the last offset (400 ms): nothing came after the cancel, not even the end.
        try await Task.sleep(for: .milliseconds(600))
        #expect(delivered.withLock { $0 } == 3)
    }
}
