import Dispatch
import Foundation
import KakapoHTTP
import Synchronization
import Testing

@testable import KakapoCassette

@Suite("Cassette recorder: recording handed off the caller's thread")
struct CassetteRecorderTests {
    static func interaction(_ target: String, status: Int = 200, bodyBytes: Int = 2) -> Interaction {
        Interaction(
            request: HTTP.Request(method: .get, target: target),
            response: HTTP.Response(status: status, body: Array(repeating: UInt8(ascii: "k"), count: bodyBytes)),
            recordedAt: "2026-11-24T00:00:00.000Z", durationMilliseconds: 1)
    }

    /// A recording the reader would refuse (status 1000): the recorder reports it through `onSaveError`.
    static let refused = interaction("/refused", status: 1000)

    /// A session recording into a new cassette whose saver waits its longest window (10 s) before folding,
    /// so the journal keeps every entry while a test looks at it.
    static func recordingSession(
        limit: Int = 64 << 20, onSaveError: @escaping @Sendable (CassetteError) -> Void = { _ in }
    ) throws -> CassetteSession {
        let session = CassetteSession(
            path: try temporaryPath(), cassette: Cassette(), redactor: .disabled, recordingQueueLimit: limit,
            onSaveError: onSaveError)
        try session.startAutosave(interval: 60)
        return session
    }

    @Test("a recording session is freed once closed: its saver thread does not keep it (nor its cassette)")
    func closedSessionIsFreed() throws {
        // A strong capture of the session by its saver thread's block kept every ended recording session
        // (tools/soak-mixed: 11.5 MiB a minute under recording sessions).
        weak var freed: CassetteSession?
        do {
            let session = CassetteSession(path: try temporaryPath(), cassette: Cassette(), redactor: .disabled)
            try session.startAutosave(interval: 0.05)
            for number in 0..<10 { session.record(Self.interaction("/\(number)"), replacing: false) }
            try session.close()
            freed = session
        }
        // The saver thread may still be on its way out of its loop: polled, within a bound that only
        // guards against a hang.
        let deadline = ContinuousClock.now + .seconds(20)
        while freed != nil && ContinuousClock.now < deadline { Thread.sleep(forTimeInterval: 0.01) }
        #expect(freed == nil, "the closed session is still alive")
    }

    @Test(
        "recordings from concurrent callers are journaled in each caller's order, and each `then` runs in journal order"
    )
    func concurrentCallersKeepTheirOrder() throws {
        let session = try Self.recordingSession()
        let answered = Mutex<[String]>([])
        let all = DispatchGroup()
        DispatchQueue.concurrentPerform(iterations: 8) { caller in
            for number in 0..<50 {
                let target = "/\(caller)/\(number)"
                all.enter()
                session.record(Self.interaction(target), replacing: false) {
                    answered.withLock { $0.append(target) }
                    all.leave()
                }
            }
        }
        #expect(all.wait(timeout: .now() + 20) == .success)
        let journaled = try #require(try CassetteJournal.leftover(of: session.path)).entries.map(
            \.interaction.request.target)
        #expect(journaled.count == 400)
        #expect(journaled == answered.withLock { $0 })
        for caller in 0..<8 {
            #expect(journaled.filter { $0.hasPrefix("/\(caller)/") } == (0..<50).map { "/\(caller)/\($0)" })
        }
        try session.close()
        #expect(try CassetteFile.load(session.path).interactions.map(\.request.target) == journaled)
    }

    @Test("`then` runs once the recording is in the journal file")
    func thenRunsAfterTheJournalHasTheEntry() throws {
        let session = try Self.recordingSession()
        let journal = CassetteJournal.path(for: session.path)
        let found = Mutex<[Bool]>([])
        let all = DispatchGroup()
        for number in 0..<20 {
            all.enter()
            session.record(Self.interaction("/journaled/\(number)"), replacing: false) {
                let bytes = (try? Data(contentsOf: URL(fileURLWithPath: journal))) ?? Data()
                let entry = Data("\"/journaled/\(number)\"".utf8)
                found.withLock { $0.append(bytes.range(of: entry) != nil) }
                all.leave()
            }
        }
        #expect(all.wait(timeout: .now() + 20) == .success)
        #expect(found.withLock { $0 } == Array(repeating: true, count: 20))
        try session.close()
    }

    @Test("the caller returns while the recorder is still busy with an earlier recording")
    func callerDoesNotWaitForTheRecorder() throws {
        let gate = DispatchSemaphore(value: 0)
        // The recorder reports the refused recording here, and stays busy until the gate opens.
        let session = try Self.recordingSession(onSaveError: { _ in _ = gate.wait(timeout: .now() + 20) })
        session.record(Self.refused, replacing: false) {}
        let answered = DispatchSemaphore(value: 0)
        let started = ContinuousClock.now
        session.record(Self.interaction("/after"), replacing: false) { answered.signal() }
        // The recorder stays busy for 20 s: anything near that is the caller waiting for it.
        #expect(ContinuousClock.now - started < .seconds(10))
        #expect(answered.wait(timeout: .now() + 0.2) == .timedOut, "`then` ran before the recorder got to it")
        gate.signal()
        #expect(answered.wait(timeout: .now() + 20) == .success)
        #expect(session.recordedCount == 1)
        try session.close()
    }

    @Test("a caller waits while the recordings not yet journaled hold more than the limit")
    func callerWaitsPastTheLimit() throws {
        let gate = DispatchSemaphore(value: 0)
        let session = try Self.recordingSession(
            limit: 4096, onSaveError: { _ in _ = gate.wait(timeout: .now() + 20) })
        session.record(Self.refused, replacing: false) {}
        let returned = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            session.record(Self.interaction("/large", bodyBytes: 8192), replacing: false) {}
            returned.signal()
        }
        #expect(returned.wait(timeout: .now() + 0.3) == .timedOut, "the queue went past its limit")
        gate.signal()
        #expect(returned.wait(timeout: .now() + 20) == .success)
        try session.close()
        #expect(try CassetteFile.load(session.path).interactions.map(\.request.target) == ["/large"])
    }

    @Test("close, the counts and `then` itself see every recording handed over before them")
    func readersSeeEverythingHandedOver() throws {
        let session = try Self.recordingSession()
        let seenInThen = Mutex(0)
        for number in 0..<300 {
            session.record(Self.interaction("/\(number)"), replacing: false) {
                // Reading the session from `then` does not wait on the recorder (it would wait forever).
                seenInThen.withLock { $0 = max($0, session.recordedCount) }
            }
        }
        #expect(session.recordedCount == 300)
        #expect(session.interactionCount == 300)
        try session.close()
        #expect(try CassetteFile.load(session.path).interactions.map(\.request.target) == (0..<300).map { "/\($0)" })
        #expect(!FileManager.default.fileExists(atPath: CassetteJournal.path(for: session.path)))
        #expect(seenInThen.withLock { $0 } == 300)
    }
}
