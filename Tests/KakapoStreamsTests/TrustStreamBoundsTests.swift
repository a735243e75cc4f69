import Foundation
import KakapoCassette
import Synchronization
import Testing

@testable import KakapoStreams

/// Issue 25, "Bounds": a recorded stream's offsets, however large, cannot trap when they are scheduled.
@Suite("Trust: recorded stream offsets")
struct TrustStreamBoundsTests {
    @Test("a chunk recorded 1e300 ms after the first is scheduled without trapping, and the first still comes")
    func hugeOffset() async throws {
        let body = StreamedBody(
            recorded: [
                ResponseChunk(offsetMilliseconds: 0, bytes: Array("first".utf8)),
                ResponseChunk(offsetMilliseconds: 1e300, bytes: Array("never".utf8)),
                ResponseChunk(offsetMilliseconds: -.infinity, bytes: Array("late".utf8)),
            ], timing: .recorded)
        let received = Mutex<[String]>([])
        body.deliver { event in
            if case .data(let bytes) = event { received.withLock { $0.append(String(decoding: bytes, as: UTF8.self)) } }
        }
        try await Task.sleep(for: .milliseconds(200))
        body.cancel()
        #expect(received.withLock { $0 } == ["first"])
    }
}
