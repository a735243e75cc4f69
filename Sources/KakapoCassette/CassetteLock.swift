import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The one lock every writer of a cassette takes: an exclusive `flock` on `NAME.lock` beside the cassette
/// (beside its target when the cassette is a symbolic link), which names the process holding it. A
/// recording holds it from the start of its autosave until its final save is written and its journal
/// removed; `CassetteFile.save` and `CassetteFile.write` hold it while they write, and folding a journal
/// left by a killed recording holds it too. A writer that finds it held is refused with a message naming
/// the holder, so nothing ever writes a cassette that a recording is appending to.
///
/// The file is removed on release; the kernel drops the `flock` of a process that dies, so a lock file
/// left by `kill -9` holds nothing and the next writer takes it.
package final class CassetteLock: Sendable {
    /// What the holder is doing, for the message another writer gets.
    package enum Purpose: String, Sendable {
        /// A recording (`kakapo record` or `serve`), held until its final save.
        case recording = "recording into"
        /// A one-off write (`kakapo cassette redact`, `verify --update`, folding a journal).
        case writing = "writing"
    }

    /// The lock file's path for the cassette at `cassettePath`.
    package static func path(for cassettePath: String) -> String {
        CassetteFile.resolvingLinks(cassettePath) + ".lock"
    }

    /// The lock file.
    package let path: String
    private let descriptor: Mutex<Int32?>

    private init(path: String, descriptor: Int32) {
        self.path = path
        self.descriptor = Mutex(descriptor)
    }

    deinit { release() }

    /// Takes the lock of the cassette at `cassettePath` for this process, without waiting. Throws
    /// `CassetteError.Code.locked`, naming the holder, when another writer (in this process or another)
    /// holds it, and `notWritable` when the lock file cannot be made.
    package static func acquire(for cassettePath: String, purpose: Purpose) throws(CassetteError) -> CassetteLock {
        if let problem = CassetteFile.reservedNameProblem(URL(fileURLWithPath: cassettePath).lastPathComponent) {
            throw CassetteError(code: .notWritable, file: cassettePath, message: problem)
        }
        let path = Self.path(for: cassettePath)
        let mode = CassetteFile.permissions(of: CassetteFile.resolvingLinks(cassettePath))
        // A holder that releases removes the file; a writer that opened it just before then locks a file
        // that has no name any more, and tries again with the new one.
        for _ in 0..<100 {
            let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, mode ?? 0o644)
            guard descriptor >= 0 else {
                throw CassetteError(
                    code: .notWritable, file: cassettePath,
                    message: "cannot create the lock \(path): \(CassetteFile.lastError())")
            }
            guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
                let busy = errno == EWOULDBLOCK
                let reason = CassetteFile.lastError()
                let holder = readHolder(descriptor)
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
            let text = Array("\(getpid()) \(purpose.rawValue) \(commandName)\n".utf8)
            _ = ftruncate(descriptor, 0)
            _ = text.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) }
            return CassetteLock(path: path, descriptor: descriptor)
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

    /// Gives the lock up and removes its file (at once; a second call does nothing).
    package func release() {
        descriptor.withLock { descriptor in
            guard let open = descriptor else { return }
            // Removed while still locked, so no other writer can hold a lock on the name being removed.
            unlink(path)
            close(open)
            descriptor = nil
        }
    }

    /// The stamp of the lock file itself (not following a link).
    private static func linkStamp(_ path: String) -> CassetteFileStamp? {
        var status = stat()
        return lstat(path, &status) == 0 ? CassetteFileStamp(status) : nil
    }

    /// What the holder wrote in the lock file: `PID PURPOSE COMMAND`.
    private static func readHolder(_ descriptor: Int32) -> (pid: Int32, purpose: String, command: String)? {
        var bytes = [UInt8](repeating: 0, count: 512)
        let count = bytes.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return nil }
        let text = String(decoding: bytes[0..<count], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        let words = text.split(separator: " ", maxSplits: 1)
        guard words.count == 2, let pid = Int32(words[0]), pid > 0 else { return nil }
        let rest = String(words[1])
        for purpose in [Purpose.recording, .writing] where rest.hasPrefix(purpose.rawValue) {
            let command = rest.dropFirst(purpose.rawValue.count).trimmingCharacters(in: .whitespaces)
            return (pid, purpose.rawValue, command)
        }
        return (pid, Purpose.writing.rawValue, rest)
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
                "another kakapo is writing this cassette (\(lock) is locked); wait until it has saved, and try again"
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
