import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The journal's two ends: opened when a recording starts, folded into the cassette by the next start (or
/// any `kakapo cassette` command) when the recording that wrote it did not end.
extension CassetteSession {
    /// What folding a journal left by an earlier run did.
    public struct Recovery: Sendable, Equatable {
        /// The cassette the journal was folded into.
        public var cassette: String
        /// Interactions added to the cassette.
        public var folded = 0
        /// Entries the cassette already held (folded just before the crash).
        public var alreadySaved = 0
        /// Entries that could not be read; the journal is then kept as `<journal>.unreadable`.
        public var unreadable = 0

        /// What happened, in one line for people.
        public var summary: String {
            "folded \(folded) interaction(s) a recording left in \(CassetteJournal.path(for: cassette)) into \(cassette)"
                + (alreadySaved > 0 ? " (\(alreadySaved) were already in it)" : "")
                + (unreadable > 0 ? "; \(unreadable) unreadable entries kept in the .unreadable file" : "")
        }
    }

    /// The journal beside the cassette at `path`, if one is there: its file, how many recordings it holds
    /// that are not in the cassette yet (left by a recording that did not end: a crash, `kill -9`, or one
    /// still running), and how many of its entries cannot be read. Reads only (`kakapo cassette lint`).
    public static func journal(of path: String) throws(CassetteError) -> (
        file: String, interactions: Int, unreadable: Int
    )? {
        guard let leftover = try CassetteJournal.leftover(of: path) else { return nil }
        return (CassetteJournal.path(for: path), leftover.entries.count, leftover.unreadable)
    }

    /// Folds the journal a recording left beside the cassette at `path` (after a crash or `kill -9`) into
    /// the cassette and removes it, with the temporary files the killed process left; nil when there is
    /// none, or a live recording holds it.
    public static func recover(_ path: String, matching: MatchOptions = MatchOptions()) throws(CassetteError)
        -> Recovery?
    {
        guard FileManager.default.fileExists(atPath: CassetteJournal.path(for: path)) else { return nil }
        let lock: CassetteLock
        do {
            lock = try CassetteLock.acquire(for: path, purpose: .writing)
        } catch {
            // A live recording holds it (and its journal); a folder nobody may write to keeps it as it is.
            return nil
        }
        defer { lock.release() }
        guard let leftover = try CassetteJournal.leftover(of: path, schema: matching.grpcSchema) else { return nil }
        if leftover.entries.isEmpty && leftover.unreadable == 0 {
            // A recording killed before it recorded anything leaves an empty journal (its lock): nothing to fold.
            unlink(CassetteJournal.path(for: path))
            return nil
        }
        // The recording was killed, perhaps in the middle of a save: its half-written copies go.
        CassetteFile.removeTemporariesOfDeadProcesses(besides: path)
        let cassette = try CassetteFile.loadIfPresent(path, schema: matching.grpcSchema)
        let saved = Set(cassette.interactions.map { CassetteCodec.encodeChunk($0, schema: matching.grpcSchema) })
        // Entries were redacted when they were recorded.
        let session = CassetteSession(path: path, cassette: cassette, redactor: .disabled, matching: matching)
        var recovery = Recovery(cassette: path, unreadable: leftover.unreadable)
        for entry in leftover.entries {
            if saved.contains(CassetteCodec.encodeChunk(entry.interaction, schema: matching.grpcSchema)) {
                recovery.alreadySaved += 1
            } else {
                session.record(entry.interaction, replacing: entry.replacing)
                recovery.folded += 1
            }
        }
        if recovery.folded > 0 {
            try session.close()
            CassetteFileStamp.forget(path)
        }
        let journal = CassetteJournal.path(for: path)
        if recovery.unreadable > 0 {
            rename(journal, journal + ".unreadable")
        } else {
            unlink(journal)
        }
        return recovery
    }

    /// Takes the lock of the cassette at `path` for a recording that starts on it and opens its journal.
    /// Throws (`locked`) when another recording or writer holds the cassette, when the file changed since it
    /// was read (`loadedStamp`: another recording saved it meanwhile), when a recording that ended after
    /// this one started left a journal, and when the journal cannot be opened; the lock is then released.
    static func openJournal(of path: String, loadedStamp: CassetteFileStamp) throws(CassetteError)
        -> (journal: CassetteJournal, lock: CassetteLock)
    {
        let lock = try CassetteLock.acquire(for: path, purpose: .recording)
        do throws(CassetteError) {
            return (try freshJournal(of: path, loadedStamp: loadedStamp, lock: lock), lock)
        } catch {
            lock.release()
            throw error
        }
    }

    /// The journal of a recording that starts under `lock`, once the file is as it was read and no other
    /// recording has left a journal since.
    private static func freshJournal(of path: String, loadedStamp: CassetteFileStamp, lock: CassetteLock)
        throws(CassetteError) -> CassetteJournal
    {
        if CassetteFileStamp.current(path) != loadedStamp {
            throw CassetteError(
                code: .locked, file: path,
                message:
                    "another kakapo saved this cassette after it was read here (a recording that was ending): start again to record on top of what it saved"
            )
        }
        let journalPath = CassetteJournal.path(for: path)
        if let size = (try? FileManager.default.attributesOfItem(atPath: journalPath))?[.size] as? Int,
            size > 0
        {
            throw CassetteError(
                code: .locked, file: path,
                message:
                    "a recording that ended after this one started left \(journalPath): start again to fold it in first"
            )
        }
        return try CassetteJournal(cassettePath: path, lock: lock)
    }

    /// Where the recordings a session could not save are, in words: `journaled` of them in the `journal`
    /// file, the `unjournaled` entries written to a rescue file in the temporary folder (or lost).
    static func whereabouts(journaled: Int, unjournaled entries: [[UInt8]], journal: String, cassette: String)
        -> [String]
    {
        var whereabouts: [String] = []
        if journaled > 0 {
            whereabouts.append(
                "\(journaled) are kept in \(journal) (the next start or any `kakapo cassette` command folds them in)"
            )
        }
        if !entries.isEmpty {
            if let rescue = CassetteJournal.writeRescue(entries, for: cassette) {
                whereabouts.append(
                    "\(entries.count) did not fit in the journal and are in \(rescue) (append it to \(journal) once there is room, and any `kakapo cassette` command folds them in)"
                )
            } else {
                whereabouts.append("\(entries.count) could not be written anywhere and are lost")
            }
        }
        return whereabouts
    }
}
