import Foundation
import Synchronization
import Testing

@testable import KakapoEngine
@testable import KakapoProxy
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
}
