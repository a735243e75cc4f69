import Foundation
import Synchronization
import Testing

@testable import KakapoStreams
@testable import KakapoUpstream

/// A streamed answer keeps its bytes in order whenever the client's connection attaches to it.
@Suite("Live responses")
struct LiveResponseTests {
    @Test("bytes arriving while a consumer attaches never overtake the ones that waited, and the end comes last")
    func orderWhileAttaching() async throws {
        for round in 0..<200 {
            let live = LiveResponse(recording: .whole, resumer: TransferResumer {})
            let expected = (0..<3000).map { UInt8(truncatingIfNeeded: $0) }
            let seen = Mutex<(bytes: [UInt8], ended: Bool, afterEnd: Bool)>(([], false, false))
            let producer = Thread {
                for byte in expected { _ = live.append([byte]) }
                live.finish()
            }
            producer.start()
            // Attach at a different moment each round: before, during or after the producer's run.
            try await Task.sleep(for: .microseconds(round * 5))
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                live.attach { event in
                    seen.withLock { state in
                        switch event {
                        case .data(let bytes):
                            if state.ended { state.afterEnd = true }
                            state.bytes += bytes
                        case .end, .broken:
                            state.ended = true
                            continuation.resume()
                        }
                    }
                }
            }
            let result = seen.withLock { $0 }
            #expect(result.bytes == expected, "round \(round): bytes out of order")
            #expect(!result.afterEnd, "round \(round): bytes after the end")
            if result.bytes != expected || result.afterEnd { return }
        }
    }

    @Test("a finished answer lets go of its consumer, which holds it: attached before the end or after it")
    func finishedAnswerIsFreed() {
        // The connection's writer captures the answer to report what the socket took; kept by the answer
        // after its end, the pair (and the writer's connection context) lived for good, one per stream.
        for attachesFirst in [true, false] {
            weak var freed: LiveResponse?
            let ended = Mutex(false)
            do {
                let live = LiveResponse(recording: .whole, resumer: TransferResumer {})
                let consumer: @Sendable (LiveResponse.Event) -> Void = { [live] event in
                    if case .data(let bytes) = event { live.delivered(bytes.count) }
                    if case .end = event { ended.withLock { $0 = true } }
                }
                if attachesFirst { live.attach(consumer) }
                _ = live.append(Array("data".utf8))
                live.finish()
                if !attachesFirst { live.attach(consumer) }
                freed = live
            }
            #expect(ended.withLock { $0 }, "attached first: \(attachesFirst)")
            #expect(freed == nil, "attached first: \(attachesFirst): the finished answer is still alive")
        }
    }
}
