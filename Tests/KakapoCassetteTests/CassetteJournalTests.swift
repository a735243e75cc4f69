import Foundation
import Testing

@testable import KakapoCassette

@Suite("Cassette journal")
struct CassetteJournalTests {
    static func contents(_ journal: CassetteJournal) throws -> [UInt8] {
        Array(try Data(contentsOf: URL(fileURLWithPath: journal.path)))
    }

    @Test(
        "dropping folded entries in two steps keeps the entries appended before and during the copy, in order"
    )
    func discardKeepsLaterEntries() throws {
        let journal = try CassetteJournal(cassettePath: try temporaryPath())
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

    @Test("with nothing left at the fold's start, entries appended during it are kept; with none, it empties")
    func discardWithoutPreparedCopy() throws {
        let journal = try CassetteJournal(cassettePath: try temporaryPath())
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
        let journal = try CassetteJournal(cassettePath: try temporaryPath())
        let entries = Array("first\nsecond\n".utf8)
        try journal.append(entries)
        let prepared = try #require(try journal.prepareDiscard(upTo: 6, end: entries.count))
        journal.abandon(prepared)
        #expect(!FileManager.default.fileExists(atPath: prepared.path))
        #expect(try Self.contents(journal) == entries)
    }
}
