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
        for file in files {
            let bytes = try [UInt8](Data(contentsOf: folder.appendingPathComponent(file)))
            let started = ContinuousClock.now
            await FuzzCorpusTests.onThread { target.run(bytes) }
            #expect(ContinuousClock.now - started < .seconds(5), "\(target.rawValue)/\(file) took too long")
        }
    }

    /// Runs `work` on a thread of its own: the entry points wait (as libFuzzer's callback must), and waiting
    /// on Swift's cooperative pool could hold back the very task they wait for.
    static func onThread(_ work: @escaping @Sendable () -> Void) async {
        await withCheckedContinuation { continuation in
            Thread {
                work()
                continuation.resume()
            }.start()
        }
    }
}
