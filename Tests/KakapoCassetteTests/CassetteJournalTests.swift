import Foundation
import KakapoHTTP
import Testing

@testable import KakapoCassette

@Suite("Cassette journal")
struct CassetteJournalTests {
    static func contents(_ journal: CassetteJournal) throws -> [UInt8] {
        Array(try Data(contentsOf: URL(fileURLWithPath: journal.path)))
    }

    /// The journal of a new cassette at `path`, with the cassette's lock (taken on the journal) held.
    static func opened(_ path: String) throws -> CassetteJournal {
        try CassetteJournal(cassettePath: path, lock: try CassetteLock.acquire(for: path, purpose: .recording))
    }

    @Test(
        "dropping folded entries in two steps keeps the entries appended before and during the copy, in order"
    )
    func discardKeepsLaterEntries() throws {
        let journal = try Self.opened(try temporaryPath())
        let (first, second, third) = (Array("first\n".utf8), Array("second\n".utf8), Array("third\n".utf8))
        try journal.append(first)
        try journal.append(second)
        // The fold saved `first`; `second` was there when it began, `third` comes during the copy.
        let prepared = try journal.prepareDiscard(upTo: first.count, end: first.count + second.count)
        #expect(prepared != nil)
        try journal.append(third)
        try journal.finishDiscard(upTo: first.count, prepared: prepared)
        #expect(try Self.contents(journal) == second + third)
        #expect(journal.size == second.count + third.count)
        // Appends go on into the new file.
        try journal.append(first)
        #expect(try Self.contents(journal) == second + third + first)
        #expect(!FileManager.default.fileExists(atPath: prepared!.path), "the copy became the journal")
    }

    @Test("the copy that replaces the journal is locked: no other writer takes the cassette after a discard")
    func replacedJournalStaysLocked() throws {
        let path = try temporaryPath()
        let journal = try Self.opened(path)
        try journal.append(Array("first\n".utf8))
        try journal.append(Array("second\n".utf8))
        let prepared = try journal.prepareDiscard(upTo: 6, end: 13)
        try journal.finishDiscard(upTo: 6, prepared: prepared)
        #expect(try Self.contents(journal) == Array("second\n".utf8))
        #expect(throws: CassetteError.self) { try CassetteLock.acquire(for: path, purpose: .writing) }
        // And no file is kept for the lock alone.
        #expect(!FileManager.default.fileExists(atPath: path + ".lock"))
    }

    @Test("with nothing left at the fold's start, entries appended during it are kept; with none, it empties")
    func discardWithoutPreparedCopy() throws {
        let journal = try Self.opened(try temporaryPath())
        let (first, second) = (Array("first\n".utf8), Array("second\n".utf8))
        try journal.append(first)
        #expect(try journal.prepareDiscard(upTo: first.count, end: first.count) == nil)
        try journal.append(second)
        try journal.finishDiscard(upTo: first.count, prepared: nil)
        #expect(try Self.contents(journal) == second)
        try journal.finishDiscard(upTo: second.count, prepared: nil)
        #expect(try Self.contents(journal).isEmpty)
        #expect(journal.size == 0)
    }

    @Test("an abandoned copy is removed and the journal is left as it was")
    func abandonedCopy() throws {
        let journal = try Self.opened(try temporaryPath())
        let entries = Array("first\nsecond\n".utf8)
        try journal.append(entries)
        let prepared = try #require(try journal.prepareDiscard(upTo: 6, end: entries.count))
        journal.abandon(prepared)
        #expect(!FileManager.default.fileExists(atPath: prepared.path))
        #expect(try Self.contents(journal) == entries)
    }

    @Test("recovering a killed recording's journal removes the temporaries it left, not a live process's")
    func recoveryRemovesDeadTemporaries() throws {
        let path = try temporaryPath()
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent().path
        let interaction = Interaction(
            request: HTTP.Request(method: .get, target: "/a"), response: HTTP.Response(status: 204),
            recordedAt: "2026-11-23T00:00:00.000Z", durationMilliseconds: 1)
        let entry = CassetteJournal.entry(interaction: CassetteCodec.encodeChunk(interaction), replacing: false)
        try Data(entry).write(to: URL(fileURLWithPath: CassetteJournal.path(for: path)))
        // A process that has ended, for a pid nobody uses now.
        let ended = Process()
        ended.executableURL = URL(fileURLWithPath: "/bin/true")
        try ended.run()
        ended.waitUntilExit()
        let dead = ended.processIdentifier
        let leftovers = [".cassette.json.\(dead).tmp", ".cassette.json.journal.\(dead).tmp"]
        let live = [".cassette.json.\(getppid()).tmp", ".other.json.\(dead).tmp", ".cassette.json.x.tmp"]
        for file in leftovers + live { try Data("half".utf8).write(to: URL(fileURLWithPath: directory + "/" + file)) }

        let recovery = try #require(try CassetteSession.recover(path))
        #expect(recovery.folded == 1)
        let files = Set(try FileManager.default.contentsOfDirectory(atPath: directory))
        #expect(files.isDisjoint(with: leftovers), "\(files)")
        #expect(files.isSuperset(of: live), "a live process's copy and other files stay: \(files)")
    }
}
