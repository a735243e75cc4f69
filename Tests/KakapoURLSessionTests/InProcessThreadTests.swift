import Foundation
import KakapoTestSupport
import Testing

/// Kakapo in process runs the engine alone: no SwiftNIO event loop, no event-loop thread.
@Suite("Kakapo in process: no event loop")
struct InProcessThreadTests {
    @Test("an in-process Kakapo answers a route, a recording and a miss with no event-loop thread in the process")
    func noEventLoopThreads() async throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().path
        let result = try await KakapoProcess.run(
            [root + "/cassettes/demo.json"], executable: KakapoProcess.builtProduct("kakapo-inprocess-thread-probe"))
        try #require(result.status == 0, "\(result.error)")
        #expect(result.output.contains("answers: 200 200 404"), "\(result.output)")
        let threads = result.output.split(separator: "\n").filter { $0.hasPrefix("thread: ") }
        #expect(!threads.isEmpty, "no threads listed: \(result.output)")
        let eventLoops = threads.filter { $0.contains("NIO-ELT") }
        #expect(eventLoops.isEmpty, "event-loop threads in process: \(eventLoops)")
    }
}
