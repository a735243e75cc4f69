import Foundation
import KakapoGRPC
import KakapoJSON

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Reads and writes cassette files. Saving is atomic: the bytes go to a temporary file in the same folder,
/// which is flushed to disk and then renamed over the cassette, so the file is always a complete cassette.
/// A save keeps the file's permissions (the temporary file is created with them), and a cassette that is
/// a symbolic link is written through: the link stays, and its target is replaced atomically (the
/// temporary file goes beside the target, so the rename stays on one file system). Links are followed
/// rather than refused because teams share cassettes between projects that way, and replacing the link
/// with a file silently ends the sharing.
public enum CassetteFile {
    /// Loads the cassette at `path`; every failure names the file, and the line and column where known.
    /// gRPC messages written as JSON need `schema` (`--proto-descriptor`).
    public static func load(_ path: String, schema: GRPCSchema? = nil) throws(CassetteError) -> Cassette {
        guard let (bytes, stamp) = readFile(path) else {
            let reason = FileManager.default.fileExists(atPath: path) ? "cannot read the file" : "no such file"
            throw CassetteError(code: .unreadable, file: path, message: reason)
        }
        let cassette = try decode(bytes, file: path, schema: schema)
        // A recording that starts on this cassette checks, once it holds the lock, that the file is still
        // the one read here.
        CassetteFileStamp.remember(stamp, loadedFrom: path)
        #if canImport(Glibc)
            // Parsing leaves much freed memory behind in malloc's arenas: give it back, so a large cassette
            // costs what it holds, not what loading it took.
            _ = kakapoMallocTrim(0)
        #endif
        return cassette
    }

    /// The file's bytes, read straight into one array (no second copy of a large file); nil when it
    /// cannot be read.
    static func readBytes(_ path: String) -> [UInt8]? { readFile(path)?.bytes }

    /// The file's bytes and the stamp of the file they were read from; nil when it cannot be read.
    static func readFile(_ path: String) -> (bytes: [UInt8], stamp: CassetteFileStamp)? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG else { return nil }
        var bytes: [UInt8] = []
        var capacity = max(Int(status.st_size), 0) + 1
        var count = 0
        while true {
            if count == capacity { capacity *= 2 }
            if bytes.count < capacity { bytes += [UInt8](repeating: 0, count: capacity - bytes.count) }
            let read = bytes.withUnsafeMutableBytes {
                Foundation.read(descriptor, $0.baseAddress! + count, capacity - count)
            }
            if read < 0 {
                if errno == EINTR { continue }
                return nil
            }
            if read == 0 { break }
            count += read
        }
        bytes.removeLast(bytes.count - count)
        return (bytes, CassetteFileStamp(status))
    }

    /// Decodes cassette bytes; `file` is the name used in error messages.
    public static func decode(_ bytes: [UInt8], file: String, schema: GRPCSchema? = nil) throws(CassetteError)
        -> Cassette
    {
        // Interactions are decoded as they are parsed, so the parsed tree of the whole file never exists
        // at once: memory stays near the size of the decoded cassette.
        var interactions: [Interaction] = []
        let interner = HeaderInterner()
        let value: JSONValue
        do {
            value = try JSONParser.parse(bytes, options: .init(rejectDuplicateKeys: true), streaming: "interactions") {
                element, index in
                interactions.append(
                    try CassetteCodec.decodeInteraction(
                        element, at: [.key("interactions"), .index(index)], interner: interner, schema: schema))
            }
        } catch let error as JSONParseError {
            throw CassetteError(
                code: .syntax, file: file, line: error.line, column: error.column, message: error.message)
        } catch let error as CassetteDecodingError {
            throw invalid(error, bytes: bytes, file: file)
        } catch {
            throw CassetteError(code: .invalid, file: file, message: "\(error)")
        }
        do {
            return try CassetteCodec.decode(value, streamed: interactions)
        } catch {
            throw invalid(error, bytes: bytes, file: file)
        }
    }

    private static func invalid(_ error: CassetteDecodingError, bytes: [UInt8], file: String) -> CassetteError {
        let location = JSONParser.location(of: error.path, in: bytes)
        let at = error.path.isEmpty ? "" : " (at \(error.path.pointer))"
        return CassetteError(
            code: .invalid, file: file, line: location?.line, column: location?.column, message: error.message + at)
    }

    /// Loads the cassette at `path`, or an empty one when no file exists there yet.
    public static func loadIfPresent(_ path: String, schema: GRPCSchema? = nil) throws(CassetteError) -> Cassette {
        if !FileManager.default.fileExists(atPath: path) {
            CassetteFileStamp.remember(.absent, loadedFrom: path)
            return Cassette()
        }
        return try load(path, schema: schema)
    }

    /// Writes `cassette` to `path` atomically, holding the cassette's lock: refused (`locked`, naming the
    /// process) while a recording or another writer holds it, and (`invalid`, naming the interaction)
    /// when an interaction holds what the reader refuses, such as a header value with a line break.
    public static func save(_ cassette: Cassette, to path: String) throws(CassetteError) {
        try CassetteAdmission.check(cassette.interactions, file: path)
        try write(CassetteCodec.encodeFile(cassette), to: path)
    }

    /// Where `process` writes `path` before renaming it into place: `.NAME.PID.tmp` in the same folder.
    /// The cassette's saves and the journal's copies both use it.
    static func temporaryPath(for path: String, process: Int32 = getpid()) -> String {
        let path = resolvingLinks(path)
        let url = URL(fileURLWithPath: path)
        return url.deletingLastPathComponent().path + "/" + temporaryPrefix(of: url.lastPathComponent)
            + "\(process).tmp"
    }

    private static func temporaryPrefix(of name: String) -> String { "." + name + "." }

    /// Why no cassette may have the file name `name`, or nil when one may. Kakapo keeps each cassette's
    /// lock (`NAME.lock`), journal (`NAME.journal`) and temporary copies (`.NAME.PID.tmp`) beside it, so a
    /// cassette named like one of them would share its lock or journal with another cassette, or be
    /// removed as a dead process's leftover.
    package static func reservedNameProblem(_ name: String) -> String? {
        for suffix in [".lock", ".journal"] where name.hasSuffix(suffix) {
            return
                "a cassette's name may not end in \(suffix): Kakapo keeps each cassette's journal, which is also its lock, under NAME.journal (and older versions their lock under NAME.lock)"
        }
        if name.hasPrefix("."), name.hasSuffix(".tmp") {
            return
                "a cassette's name may not have the form .NAME.tmp: Kakapo writes its temporary copies under such names"
        }
        return nil
    }

    /// Removes the temporary files (`temporaryPath`) of the cassette at `path` and of its journal that
    /// processes killed while writing left, for processes that are gone (a live one may be writing its own).
    static func removeTemporariesOfDeadProcesses(besides path: String) {
        let path = resolvingLinks(path)
        let url = URL(fileURLWithPath: path)
        let directory = url.deletingLastPathComponent().path
        let prefixes = [path, CassetteJournal.path(for: path)].map {
            temporaryPrefix(of: URL(fileURLWithPath: $0).lastPathComponent)
        }
        guard let files = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return }
        for file in files where file.hasSuffix(".tmp") {
            for prefix in prefixes where file.hasPrefix(prefix) {
                guard let pid = Int32(file.dropFirst(prefix.count).dropLast(4)), pid > 0 else { continue }
                if kill(pid, 0) != 0 && errno == ESRCH { unlink(directory + "/" + file) }
            }
        }
    }

    /// Writes `bytes` to `path` atomically (temporary file, fsync, rename), holding the file's
    /// `CassetteLock`: refused (`locked`, naming the process) while a recording or another writer holds it,
    /// and when this process read the file at `path` and it has changed on disk since.
    public static func write(_ bytes: [UInt8], to path: String) throws(CassetteError) {
        try CassetteLock.withLock(path) { () throws(CassetteError) -> Void in
            // A command that read the file, then changed it (`cassette redact`, `verify --update`) must not
            // write over what a recording saved since the read.
            if let loaded = CassetteFileStamp.whenLoaded(path), loaded != CassetteFileStamp.current(path) {
                throw CassetteError(
                    code: .locked, file: path,
                    message:
                        "the cassette changed on disk after it was read here (a recording saved it meanwhile); run the command again"
                )
            }
            try writeAtomically(to: path) { emit in try bytes.withUnsafeBytes(emit) }
        }
        // What this process loaded from there is not what is there now.
        CassetteFileStamp.forget(path)
    }

    /// Writes what `produce` emits to `path` atomically: temporary file, fsync, rename. The caller holds
    /// the cassette's lock. The new file has the permissions of the one it replaces (0644 less the umask
    /// for a new one) from its creation on; a symbolic link is written through. Returns the new file's
    /// stamp.
    @discardableResult
    static func writeAtomically(
        to path: String, _ produce: ((UnsafeRawBufferPointer) throws -> Void) throws -> Void
    ) throws(CassetteError) -> CassetteFileStamp {
        let target = resolvingLinks(path)
        let temporary = temporaryPath(for: target)
        let descriptor = try createExclusively(temporary, mode: permissions(of: target), file: path)
        var failure: String?
        do {
            try produce { raw in
                if let failure = writeAll(raw, to: descriptor) {
                    throw CassetteError(code: .notWritable, file: path, message: failure)
                }
            }
            if fsync(descriptor) != 0 { failure = lastError() }
        } catch let error as CassetteError {
            failure = error.message
        } catch {
            failure = "\(error)"
        }
        let stamp = CassetteFileStamp.of(descriptor: descriptor)
        close(descriptor)
        if let failure {
            unlink(temporary)
            throw CassetteError(code: .notWritable, file: path, message: "cannot write: \(failure)")
        }
        guard rename(temporary, target) == 0 else {
            let reason = lastError()
            unlink(temporary)
            throw CassetteError(code: .notWritable, file: path, message: "cannot replace the file: \(reason)")
        }
        return stamp ?? CassetteFileStamp.current(target)
    }

    /// Creates the new file `path` (opened with `access` and created exclusively) with `mode`, or 0644
    /// less the umask for nil. A file left there by an earlier process of the same id is removed first,
    /// and a link is never followed. When the umask takes bits of `mode` away, they are given back while
    /// the file is still empty, so it never holds a byte under other permissions. `file` names the
    /// cassette in errors.
    static func createExclusively(
        _ path: String, mode: mode_t?, access: Int32 = O_WRONLY, file: String
    ) throws(CassetteError) -> Int32 {
        unlink(path)
        let descriptor = open(path, access | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode ?? 0o644)
        guard descriptor >= 0 else {
            throw CassetteError(code: .notWritable, file: file, message: "cannot create \(path): \(lastError())")
        }
        var status = stat()
        if let mode, fstat(descriptor, &status) == 0, status.st_mode & 0o777 != mode {
            _ = fchmod(descriptor, mode)
        }
        return descriptor
    }

    /// The permission bits of the file at `path`, which the files that replace it or sit beside it (its
    /// journal, its lock, its temporary copies) are created with; nil when there is none yet.
    static func permissions(of path: String) -> mode_t? {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        return status.st_mode & 0o777
    }

    /// `path`, or the file it leads to when it is a symbolic link (followed to the end, relative links
    /// from their own folder); the folders on the way are left as they are.
    public static func resolvingLinks(_ path: String) -> String {
        var current = path
        for _ in 0..<40 {
            var status = stat()
            guard lstat(current, &status) == 0, status.st_mode & S_IFMT == S_IFLNK,
                let destination = try? FileManager.default.destinationOfSymbolicLink(atPath: current)
            else { return current }
            current =
                destination.hasPrefix("/")
                ? destination : URL(fileURLWithPath: current).deletingLastPathComponent().path + "/" + destination
        }
        return current
    }

    /// Checks that a cassette can be written at `path` (at its target when it is a symbolic link), creating
    /// nothing that stays behind.
    public static func checkWritable(_ path: String) throws(CassetteError) {
        // A link's target is what gets written, beside itself.
        let url = URL(fileURLWithPath: resolvingLinks(path))
        let directory = url.deletingLastPathComponent().path
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw CassetteError(code: .notWritable, file: path, message: "the folder \(directory) does not exist")
        }
        guard access(directory, W_OK) == 0 else {
            throw CassetteError(code: .notWritable, file: path, message: "the folder \(directory) is not writable")
        }
    }

    /// Writes all of `raw` to `descriptor` (again after an interrupted or partial write); the reason when
    /// it cannot.
    static func writeAll(_ raw: UnsafeRawBufferPointer, to descriptor: Int32) -> String? {
        var written = 0
        while written < raw.count {
            let result = Foundation.write(descriptor, raw.baseAddress! + written, raw.count - written)
            if result < 0 {
                if errno == EINTR { continue }
                return lastError()
            }
            written += result
        }
        return nil
    }

    static func lastError() -> String { String(cString: strerror(errno)) }
}

#if canImport(Glibc)
    /// glibc's `malloc_trim` (declared in malloc.h, which the Glibc module leaves out).
    @_silgen_name("malloc_trim")
    private func kakapoMallocTrim(_ pad: Int) -> Int32
#endif
