import Foundation
import KakapoGRPC
import KakapoJSON

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The append-only file beside a cassette that a recording writes each interaction to before its client
/// gets the answer (`api.json` → `api.json.journal`). The cassette itself is rewritten now and then from
/// memory (folded); what the journal holds beyond the last fold is folded in by the next start or any
/// `kakapo cassette` command after a crash or `kill -9`, so no answered interaction is lost and the
/// cassette never ends truncated.
///
/// Format: a JSON text sequence (RFC 7464): each entry is the byte 0x1E, a JSON object
/// `{"replace": Bool, "interaction": {...}}` in the cassette's own interaction form, and a line feed. A
/// last entry cut short by a crash is ignored. Only the holder of the cassette's `CassetteLock` writes or
/// folds the journal, so a journal in use by a live recording is never folded by another process. It has
/// the cassette's permissions from its creation on (beside the link's target when the cassette is a link).
package final class CassetteJournal {
    /// The journal's path for the cassette at `cassettePath`.
    package static func path(for cassettePath: String) -> String {
        CassetteFile.resolvingLinks(cassettePath) + ".journal"
    }

    package let path: String
    /// The cassette's lock, which is taken on this file: a copy that replaces it is handed to it first.
    private let lock: CassetteLock
    private var descriptor: Int32
    /// The permissions of the cassette, which the journal and its copies are created with.
    private let mode: mode_t?
    /// Bytes written since the journal was last emptied.
    private(set) var size = 0

    /// Opens the journal of the cassette at `cassettePath`, which `lock` (the cassette's lock, taken on
    /// the journal) made.
    package init(cassettePath: String, lock: CassetteLock) throws(CassetteError) {
        path = Self.path(for: cassettePath)
        self.lock = lock
        mode = CassetteFile.permissions(of: CassetteFile.resolvingLinks(cassettePath))
        descriptor = open(path, O_RDWR | O_APPEND | O_NOFOLLOW | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw CassetteError(
                code: .notWritable, file: cassettePath, message: "cannot open \(path): \(CassetteFile.lastError())")
        }
        size = Int(lseek(descriptor, 0, SEEK_END))
    }

    deinit { close(descriptor) }

    /// One entry's bytes: `interaction` is an interaction as `CassetteCodec` writes it in the file.
    static func entry(interaction: [UInt8], replacing: Bool) -> [UInt8] {
        var bytes: [UInt8] = [0x1E]
        bytes.reserveCapacity(interaction.count + 40)
        bytes += Array(
            (replacing ? "{\"replace\": true, \"interaction\": " : "{\"replace\": false, \"interaction\": ").utf8)
        bytes += interaction
        bytes += Array("}\n".utf8)
        return bytes
    }

    /// Appends an entry with one `write`; once it returns, the entry survives the process being killed.
    func append(_ entry: [UInt8]) throws(CassetteError) {
        do {
            try writeAll(entry, to: descriptor)
        } catch {
            // A part of an entry (a full disk) is taken back, so the entries after it stay readable.
            _ = ftruncate(descriptor, off_t(size))
            throw error
        }
        size += entry.count
    }

    /// The first half of dropping what a fold saved (see `finishDiscard`): the entries from `folded` up
    /// to `end` (the journal's size when the fold began) are copied to a new file, flushed to the disk.
    /// It reads only bytes that appends no longer touch, so recordings go on meanwhile: the caller holds
    /// no lock. Nil when there is nothing to keep up to `end`.
    func prepareDiscard(upTo folded: Int, end: Int) throws(CassetteError) -> PreparedDiscard? {
        guard folded < end else { return nil }
        let copy = try newCopy(from: folded, to: end)
        _ = fsync(copy.descriptor)
        return copy
    }

    /// A copy of the entries to keep that `prepareDiscard` made.
    struct PreparedDiscard {
        let path: String
        let descriptor: Int32
        /// The journal's offset the copy reaches.
        let copiedUpTo: Int
    }

    /// After a fold that saved the first `folded` bytes' worth of entries: keeps only the rest, with
    /// appends held off (the caller holds the lock they take). With nothing prepared and nothing after
    /// `folded`, the journal is emptied. Otherwise what was appended since `prepared` was made is added
    /// to its copy (these few entries are not flushed: appends never are), and the copy replaces the
    /// journal, so a crash at any point leaves either the old journal (its folded entries are then
    /// recognised in the cassette and skipped) or the new one. `prepared` is used up: when this fails,
    /// it is removed.
    func finishDiscard(upTo folded: Int, prepared: PreparedDiscard?) throws(CassetteError) {
        if prepared == nil && folded >= size {
            guard ftruncate(descriptor, 0) == 0 else {
                throw CassetteError(
                    code: .notWritable, file: path, message: "cannot empty: \(CassetteFile.lastError())")
            }
            size = 0
            return
        }
        let copy: PreparedDiscard
        if let prepared {
            copy = try extend(prepared, to: size)
        } else {
            copy = try newCopy(from: folded, to: size)
        }
        // Locked before it takes the journal's name, so that name never points at an unlocked file.
        guard flock(copy.descriptor, LOCK_EX | LOCK_NB) == 0, rename(copy.path, path) == 0 else {
            let reason = CassetteFile.lastError()
            abandon(copy)
            throw CassetteError(code: .notWritable, file: path, message: "cannot replace: \(reason)")
        }
        lock.adopt(copy.descriptor)
        close(descriptor)
        descriptor = copy.descriptor
        size -= folded
    }

    /// Removes a copy that will not replace the journal.
    func abandon(_ prepared: PreparedDiscard) {
        close(prepared.descriptor)
        unlink(prepared.path)
    }

    /// A new file beside the journal holding its bytes `start..<end`.
    private func newCopy(from start: Int, to end: Int) throws(CassetteError) -> PreparedDiscard {
        let temporary = CassetteFile.temporaryPath(for: path)
        let descriptor = try CassetteFile.createExclusively(
            temporary, mode: mode, access: O_RDWR | O_APPEND, file: path)
        return try extend(PreparedDiscard(path: temporary, descriptor: descriptor, copiedUpTo: start), to: end)
    }

    /// `copy` with the journal's bytes from where it reaches up to `end` appended; removed on failure.
    private func extend(_ copy: PreparedDiscard, to end: Int) throws(CassetteError) -> PreparedDiscard {
        guard copy.copiedUpTo < end else { return copy }
        var bytes = [UInt8](repeating: 0, count: end - copy.copiedUpTo)
        let read = bytes.withUnsafeMutableBytes {
            pread(descriptor, $0.baseAddress, $0.count, off_t(copy.copiedUpTo))
        }
        do throws(CassetteError) {
            guard read == bytes.count else {
                throw CassetteError(
                    code: .notWritable, file: path, message: "cannot read back: \(CassetteFile.lastError())")
            }
            try writeAll(bytes, to: copy.descriptor)
        } catch {
            abandon(copy)
            throw error
        }
        return PreparedDiscard(path: copy.path, descriptor: copy.descriptor, copiedUpTo: end)
    }

    /// Writes `entries` (journal entries the journal of `cassettePath` had no room for) to a new file in
    /// the temporary folder, readable by its owner only; its path, or nil when it cannot be written.
    static func writeRescue(_ entries: [[UInt8]], for cassettePath: String) -> String? {
        let name = URL(fileURLWithPath: cassettePath).lastPathComponent
        let path = URL(fileURLWithPath: NSTemporaryDirectory())
            .appendingPathComponent("kakapo-unsaved-\(name).\(getpid()).journal").path
        guard let descriptor = try? CassetteFile.createExclusively(path, mode: 0o600, file: cassettePath) else {
            return nil
        }
        defer { close(descriptor) }
        for entry in entries {
            if entry.withUnsafeBytes({ CassetteFile.writeAll($0, to: descriptor) }) != nil {
                unlink(path)
                return nil
            }
        }
        guard fsync(descriptor) == 0 else {
            unlink(path)
            return nil
        }
        return path
    }

    /// Removes the journal (after the final fold).
    func remove() {
        unlink(path)
        size = 0
    }

    private func writeAll(_ bytes: [UInt8], to descriptor: Int32) throws(CassetteError) {
        if let failure = bytes.withUnsafeBytes({ CassetteFile.writeAll($0, to: descriptor) }) {
            throw CassetteError(code: .notWritable, file: path, message: "cannot write: \(failure)")
        }
    }

    /// What a journal left by a run that did not end cleanly holds: its entries in order, and how many
    /// were unreadable (a last entry cut short is not counted).
    struct Leftover {
        var entries: [(interaction: Interaction, replacing: Bool)] = []
        var unreadable = 0
    }

    /// Reads the journal of `cassettePath` if one is there; nil otherwise. The caller holds the
    /// cassette's lock (so no live recording writes it).
    static func leftover(of cassettePath: String, schema: GRPCSchema? = nil) throws(CassetteError) -> Leftover? {
        let path = Self.path(for: cassettePath)
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        guard let bytes = CassetteFile.readBytes(path) else {
            throw CassetteError(code: .unreadable, file: path, message: "cannot read the journal")
        }
        var leftover = Leftover()
        let pieces = bytes.split(separator: 0x1E, omittingEmptySubsequences: true)
        for (number, piece) in pieces.enumerated() {
            let complete = piece.last == 0x0A
            do {
                let value = try JSONParser.parse(piece)
                guard case .object(let object) = value, let interaction = object["interaction"],
                    case .bool(let replacing)? = object["replace"]
                else { throw CassetteDecodingError(path: [], message: "not a journal entry") }
                leftover.entries.append(
                    (
                        try CassetteCodec.decodeInteraction(interaction, at: [.key("interaction")], schema: schema),
                        replacing
                    ))
            } catch {
                // A last entry without its line feed was cut short by the crash: it was never answered.
                if complete || number != pieces.count - 1 { leftover.unreadable += 1 }
            }
        }
        return leftover
    }
}
