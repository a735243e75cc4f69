import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The one lock every writer of a cassette takes: an exclusive `flock` on the cassette's journal
/// (`NAME.journal`, beside the link's target when the cassette is a symbolic link), made empty when none
/// is there. A recording holds it from the start of its autosave until its final save is written and its
/// journal removed; `CassetteFile.save` and `CassetteFile.write` hold it while they write, and folding a
/// journal left by a killed recording holds it too. A writer that finds it held is refused with a message
/// naming the holder where the system says who it is (Linux), so nothing ever writes a cassette that a
/// recording is appending to.
///
/// No file is kept for the lock alone: the kernel drops the `flock` of a process that dies, and what
/// `kill -9` leaves is the journal, which holds what the recording had not saved (the next `kakapo`
/// command folds it in, and `kakapo cassette lint` reports it). An empty journal is removed on release.
/// Only the holder renames or removes the journal; when it replaces the journal with a new file it locks
/// that file first and hands it to the lock (`adopt`), so the name always points at a locked file.
package final class CassetteLock: Sendable {
    /// What the holder is doing, for the message another writer gets.
    package enum Purpose: String, Sendable {
        /// A recording (`kakapo record` or `serve`), held until its final save.
        case recording = "recording into"
        /// A one-off write (`kakapo cassette redact`, `verify --update`, folding a journal).
        case writing = "writing"
    }

    /// The file the lock of the cassette at `cassettePath` is taken on: its journal.
    package static func path(for cassettePath: String) -> String {
        CassetteJournal.path(for: cassettePath)
    }

    /// The file locked (the journal).
    package let path: String
    private let purpose: Purpose
    private let descriptor: Mutex<Int32?>

    private init(path: String, purpose: Purpose, descriptor: Int32) {
        self.path = path
        self.purpose = purpose
        self.descriptor = Mutex(descriptor)
    }

    deinit { release() }

    /// Takes the lock of the cassette at `cassettePath` for this process, without waiting. Throws
    /// `CassetteError.Code.locked`, naming the holder, when another writer (in this process or another)
    /// holds it, and `notWritable` when the journal cannot be made.
    package static func acquire(for cassettePath: String, purpose: Purpose) throws(CassetteError) -> CassetteLock {
        if let problem = CassetteFile.reservedNameProblem(URL(fileURLWithPath: cassettePath).lastPathComponent) {
            throw CassetteError(code: .notWritable, file: cassettePath, message: problem)
        }
        let path = Self.path(for: cassettePath)
        let mode = CassetteFile.permissions(of: CassetteFile.resolvingLinks(cassettePath))
        // A holder that releases removes an empty journal (and a holder that replaces it renames a new one
        // over it); a writer that opened it just before then locks a file that has no name any more, and
        // tries again with the new one.
        for _ in 0..<100 {
            let descriptor = open(path, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, mode ?? 0o644)
            guard descriptor >= 0 else {
                throw CassetteError(
                    code: .notWritable, file: cassettePath,
                    message: "cannot create the journal \(path): \(CassetteFile.lastError())")
            }
            guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
                let busy = errno == EWOULDBLOCK
                let reason = CassetteFile.lastError()
                let holder = busy ? holder(of: descriptor) : nil
                close(descriptor)
                if busy { throw held(cassettePath, lock: path, holder: holder) }
                throw CassetteError(code: .notWritable, file: cassettePath, message: "cannot lock \(path): \(reason)")
            }
            guard let locked = CassetteFileStamp.of(descriptor: descriptor), let named = linkStamp(path),
                locked.device == named.device, locked.inode == named.inode
            else {
                close(descriptor)
                continue
            }
            // An empty journal left by a killed recording gets the cassette's permissions again.
            if locked.size == 0, let mode { _ = fchmod(descriptor, mode) }
            heldHere.withLock { $0[locked.inode] = purpose }
            return CassetteLock(path: path, purpose: purpose, descriptor: descriptor)
        }
        throw CassetteError(code: .notWritable, file: cassettePath, message: "cannot lock \(path): it keeps changing")
    }

    /// Runs `body` holding the lock of the cassette at `cassettePath` for a one-off write.
    package static func withLock<T>(
        _ cassettePath: String, _ body: () throws(CassetteError) -> T
    ) throws(CassetteError) -> T {
        let lock = try acquire(for: cassettePath, purpose: .writing)
        defer { lock.release() }
        return try body()
    }

    /// Gives the lock up, removing the journal when it is empty and still the file locked (at once; a
    /// second call does nothing).
    package func release() {
        descriptor.withLock { descriptor in
            guard let open = descriptor else { return }
            // Removed while still locked, so no other writer can hold a lock on the name being removed.
            let locked = CassetteFileStamp.of(descriptor: open)
            if let locked, locked.size == 0, let named = Self.linkStamp(path), locked.device == named.device,
                locked.inode == named.inode
            {
                unlink(path)
            }
            Self.letGo(open, stamp: locked)
            descriptor = nil
        }
    }

    /// Moves the lock onto `replacement`, a new file the holder locked and renamed over the journal. The
    /// caller keeps `replacement` open (the lock holds a duplicate of it, which shares its `flock`).
    func adopt(_ replacement: Int32) {
        let duplicate = dup(replacement)
        guard duplicate >= 0 else { return }  // the caller's descriptor goes on holding the lock
        let stamp = CassetteFileStamp.of(descriptor: duplicate)
        descriptor.withLock { descriptor in
            if let old = descriptor { Self.letGo(old, stamp: CassetteFileStamp.of(descriptor: old)) }
            descriptor = duplicate
        }
        if let stamp { Self.heldHere.withLock { $0[stamp.inode] = purpose } }
    }

    /// Closes `descriptor`, a file this process held the lock on (its `stamp`), and forgets it in `heldHere`.
    private static func letGo(_ descriptor: Int32, stamp: CassetteFileStamp?) {
        if let stamp { heldHere.withLock { _ = $0.removeValue(forKey: stamp.inode) } }
        close(descriptor)
    }

    /// The stamp of the file at `path` itself (not following a link).
    private static func linkStamp(_ path: String) -> CassetteFileStamp? {
        var status = stat()
        return lstat(path, &status) == 0 ? CassetteFileStamp(status) : nil
    }

    /// What this process holds, by the journal's inode: its own holders are named without asking the system.
    private static let heldHere = Mutex<[UInt64: Purpose]>([:])

    /// Who holds the lock on the file open at `descriptor`: this process (from `heldHere`), or on Linux
    /// the process `/proc/locks` names, with its command line; nil when the system does not say.
    private static func holder(of descriptor: Int32) -> (pid: Int32, purpose: String, command: String)? {
        guard let stamp = CassetteFileStamp.of(descriptor: descriptor) else { return nil }
        if let purpose = heldHere.withLock({ $0[stamp.inode] }) {
            return (getpid(), purpose.rawValue, commandName)
        }
        #if os(Linux)
            // `1: FLOCK  ADVISORY  WRITE 4242 fd:01:1319 0 EOF`: the pid and device:inode of each flock.
            guard let table = try? String(contentsOfFile: "/proc/locks", encoding: .utf8) else { return nil }
            for line in table.split(separator: "\n") {
                let fields = line.split(separator: " ")
                guard fields.count >= 6, fields[1] == "FLOCK", fields[3] == "WRITE", let pid = Int32(fields[4]),
                    pid > 0, fields[5].split(separator: ":").last == Substring(String(stamp.inode))
                else { continue }
                let arguments =
                    (try? Data(contentsOf: URL(fileURLWithPath: "/proc/\(pid)/cmdline")))
                    .map { $0.split(separator: 0).map { String(decoding: $0, as: UTF8.self) } } ?? []
                let program = arguments.first.map { URL(fileURLWithPath: $0).lastPathComponent } ?? ""
                let subcommand = arguments.dropFirst().first ?? ""
                let named = subcommand.allSatisfy({ $0.isLetter || $0 == "-" }) && !subcommand.isEmpty
                let purpose: Purpose = ["cassette", "verify"].contains(subcommand) ? .writing : .recording
                return (pid, purpose.rawValue, named ? program + " " + subcommand : program)
            }
        #endif
        return nil
    }

    /// The error for a lock another writer holds, naming it.
    private static func held(
        _ cassettePath: String, lock: String, holder: (pid: Int32, purpose: String, command: String)?
    ) -> CassetteError {
        let message: String
        if let holder {
            let who = holder.pid == getpid() ? "this process" : "process \(holder.pid)"
            let command = holder.command.isEmpty ? "" : " (\(holder.command))"
            message =
                "another kakapo is \(holder.purpose) this cassette: \(who)\(command) holds \(lock); stop it, or wait until it has saved, and try again"
        } else {
            message =
                "another kakapo is recording into or writing this cassette (\(lock) is locked); stop it, or wait until it has saved, and try again"
        }
        return CassetteError(code: .locked, file: cassettePath, message: message)
    }

    /// `kakapo record` for the CLI (the program and its subcommand), for other writers' messages.
    private static let commandName: String = {
        let arguments = ProcessInfo.processInfo.arguments
        let program = ProcessInfo.processInfo.processName
        guard arguments.count > 1, let subcommand = arguments.dropFirst().first,
            !subcommand.isEmpty, subcommand.allSatisfy({ $0.isLetter || $0 == "-" }), !subcommand.hasPrefix("-")
        else { return program }
        return program + " " + subcommand
    }()
}
