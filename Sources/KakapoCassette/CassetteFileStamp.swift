import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Which version of a cassette file is on disk: its device, inode, size and modification time, or
/// `absent`. Every save replaces the file (a new inode), so two stamps differ when anything wrote it in
/// between. A recording compares the stamp of what it loaded with the file once it holds the lock, and
/// the stamp of what it last wrote with the file before each fold copies from it.
struct CassetteFileStamp: Equatable, Sendable {
    /// The stamp standing for "no file there".
    static let absent = CassetteFileStamp(device: 0, inode: 0, size: -1, seconds: 0, nanoseconds: 0)

    let device: UInt64
    let inode: UInt64
    let size: Int64
    let seconds: Int64
    let nanoseconds: Int64

    private init(device: UInt64, inode: UInt64, size: Int64, seconds: Int64, nanoseconds: Int64) {
        self.device = device
        self.inode = inode
        self.size = size
        self.seconds = seconds
        self.nanoseconds = nanoseconds
    }

    /// The stamp of a file from its `stat`.
    init(_ status: stat) {
        #if canImport(Darwin)
            let modified = status.st_mtimespec
        #else
            let modified = status.st_mtim
        #endif
        self.init(
            device: UInt64(truncatingIfNeeded: status.st_dev), inode: UInt64(truncatingIfNeeded: status.st_ino),
            size: Int64(status.st_size), seconds: Int64(modified.tv_sec), nanoseconds: Int64(modified.tv_nsec))
    }

    /// The stamp of what is at `path` now (following links); `absent` when nothing is.
    static func current(_ path: String) -> CassetteFileStamp {
        var status = stat()
        return stat(path, &status) == 0 ? CassetteFileStamp(status) : .absent
    }

    /// The stamp of the file open as `descriptor`; nil when `fstat` fails.
    static func of(descriptor: Int32) -> CassetteFileStamp? {
        var status = stat()
        return fstat(descriptor, &status) == 0 ? CassetteFileStamp(status) : nil
    }

    /// What this process last loaded at each path, as `CassetteFile.load` read it (a session starting
    /// on that path takes it: the file may have changed between the read and the session's lock).
    private static let loaded = Mutex<[String: CassetteFileStamp]>([:])

    /// Remembers that the cassette read from `path` was `stamp`.
    static func remember(_ stamp: CassetteFileStamp, loadedFrom path: String) {
        loaded.withLock { $0[path] = stamp }
    }

    /// Forgets what was loaded from `path` (this process wrote it since).
    static func forget(_ path: String) {
        _ = loaded.withLock { $0.removeValue(forKey: path) }
    }

    /// The stamp of what this process last loaded from `path`, or nil if it loaded nothing there.
    static func whenLoaded(_ path: String) -> CassetteFileStamp? {
        loaded.withLock { $0[path] }
    }
}
