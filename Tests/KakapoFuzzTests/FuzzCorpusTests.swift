import Foundation
import KakapoFuzz
import Testing

/// Every input the fuzzers kept (tools/fuzz/corpus/<target>/) runs through its entry point on every test
/// run: what once crashed or hung stays fixed, without a fuzzing build.
@Suite("Fuzz corpora")
struct FuzzCorpusTests {
    static let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("tools/fuzz/corpus")

    @Test("each target's corpus runs through its entry point", arguments: FuzzTarget.allCases)
    func corpus(_ target: FuzzTarget) async throws {
        let folder = FuzzCorpusTests.corpus.appendingPathComponent(target.rawValue)
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
        #expect(files.count >= 3, "the \(target.rawValue) corpus needs seeds")
        _ = await FuzzCorpusTests.onThread { target.prepare() }
        for file in files {
            let bytes = try [UInt8](Data(contentsOf: folder.appendingPathComponent(file)))
            let took = await FuzzCorpusTests.onThread { target.run(bytes) }
            #expect(took < .seconds(5), "\(target.rawValue)/\(file) took \(took)")
        }
    }

    /// Runs `work` on a thread of its own and returns how long it took there: the entry points wait (as
    /// libFuzzer's callback must), and waiting on Swift's cooperative pool could hold back the very task
    /// they wait for. The time is the work's own, not how long the busy pool took to resume the test.
    static func onThread(_ work: @escaping @Sendable () -> Void) async -> Duration {
        await withCheckedContinuation { continuation in
            Thread {
                let started = ContinuousClock.now
                work()
                continuation.resume(returning: ContinuousClock.now - started)
            }.start()
        }
    }
}
