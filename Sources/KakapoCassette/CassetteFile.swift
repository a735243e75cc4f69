import Foundation
import KakapoJSON

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Reads and writes cassette files. Saving is atomic: the bytes go to a temporary file in the same folder,
/// which is flushed to disk and then renamed over the cassette, so the file is always a complete cassette.
public enum CassetteFile {
    /// Loads the cassette at `path`; every failure names the file, and the line and column where known.
    public static func load(_ path: String) throws(CassetteError) -> Cassette {
        guard let bytes = readBytes(path) else {
            let reason = FileManager.default.fileExists(atPath: path) ? "cannot read the file" : "no such file"
            throw CassetteError(code: .unreadable, file: path, message: reason)
        }
        let cassette = try decode(bytes, file: path)
        #if canImport(Glibc)
            // Parsing leaves much freed memory behind in malloc's arenas: give it back, so a large cassette
            // costs what it holds, not what loading it took.
            _ = kakapoMallocTrim(0)
        #endif
        return cassette
    }

    /// The file's bytes, read straight into one array (no second copy of a large file); nil when it
    /// cannot be read.
    static func readBytes(_ path: String) -> [UInt8]? {
        let descriptor = open(path, O_RDONLY)
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
        return bytes
    }

    /// Decodes cassette bytes; `file` is the name used in error messages.
    public static func decode(_ bytes: [UInt8], file: String) throws(CassetteError) -> Cassette {
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
                        element, at: [.key("interactions"), .index(index)], interner: interner))
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
    public static func loadIfPresent(_ path: String) throws(CassetteError) -> Cassette {
        if !FileManager.default.fileExists(atPath: path) { return Cassette() }
        return try load(path)
    }

    /// Writes `cassette` to `path` atomically.
    public static func save(_ cassette: Cassette, to path: String) throws(CassetteError) {
        try write(CassetteCodec.encodeFile(cassette), to: path)
    }

    /// Where `process` writes `path` before renaming it into place: `.NAME.PID.tmp` in the same folder.
    /// The cassette's saves and the journal's copies both use it.
    static func temporaryPath(for path: String, process: Int32 = getpid()) -> String {
        let url = URL(fileURLWithPath: path)
        return url.deletingLastPathComponent().path + "/" + temporaryPrefix(of: url.lastPathComponent)
            + "\(process).tmp"
    }

    private static func temporaryPrefix(of name: String) -> String { "." + name + "." }

    /// Removes the temporary files (`temporaryPath`) of the cassette at `path` and of its journal that
    /// processes killed while writing left, for processes that are gone (a live one may be writing its own).
    static func removeTemporariesOfDeadProcesses(besides path: String) {
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

    /// Writes `bytes` to `path` atomically: temporary file, fsync, rename.
    public static func write(_ bytes: [UInt8], to path: String) throws(CassetteError) {
        try writeAtomically(to: path) { emit in try bytes.withUnsafeBytes(emit) }
    }

    /// Writes what `produce` emits to `path` atomically: temporary file, fsync, rename.
    static func writeAtomically(
        to path: String, _ produce: ((UnsafeRawBufferPointer) throws -> Void) throws -> Void
    ) throws(CassetteError) {
        let temporary = temporaryPath(for: path)
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        guard descriptor >= 0 else {
            throw CassetteError(code: .notWritable, file: path, message: "cannot create \(temporary): \(lastError())")
        }
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
        close(descriptor)
        if let failure {
            unlink(temporary)
            throw CassetteError(code: .notWritable, file: path, message: "cannot write: \(failure)")
        }
        guard rename(temporary, path) == 0 else {
            let reason = lastError()
            unlink(temporary)
            throw CassetteError(code: .notWritable, file: path, message: "cannot replace the file: \(reason)")
        }
    }

    /// Checks that a cassette can be written at `path`, creating nothing that stays behind.
    public static func checkWritable(_ path: String) throws(CassetteError) {
        let url = URL(fileURLWithPath: path)
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
