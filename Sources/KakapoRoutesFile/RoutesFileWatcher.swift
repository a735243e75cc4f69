import Dispatch
import Foundation
import KakapoStubs

/// Watches routes files and reads them again when one changes (polling size, time and inode, which works
/// on every file system and with editors that replace files). The new definition goes to `onChange`; a
/// file that no longer reads or checks gives its error instead, and the caller keeps what it has.
public final class RoutesFileWatcher: Sendable {
    // Dispatch sources are thread-safe; the only call made on it from outside its queue is `cancel()`.
    private nonisolated(unsafe) let timer: any DispatchSourceTimer

    /// Starts watching `paths` every `interval`, reporting each change on a queue of its own.
    public init(
        paths: [String], interval: Duration = .milliseconds(250),
        onChange: @escaping @Sendable (Result<RoutesDefinition, RoutesError>) -> Void
    ) {
        let queue = DispatchQueue(label: "kakapo.routes-watcher")
        let timer = DispatchSource.makeTimerSource(queue: queue)
        nonisolated(unsafe) var last = paths.map(RoutesFileWatcher.signature)
        let milliseconds = Int(interval / .milliseconds(1))
        timer.schedule(deadline: .now() + .milliseconds(milliseconds), repeating: .milliseconds(milliseconds))
        timer.setEventHandler {
            // Runs only on `queue`, one call at a time, so `last` is never touched concurrently.
            let current = paths.map(RoutesFileWatcher.signature)
            guard current != last else { return }
            last = current
            onChange(Result { () throws(RoutesError) in try RoutesFile.load(paths) })
        }
        timer.resume()
        self.timer = timer
    }

    /// Stops watching.
    public func stop() { timer.cancel() }

    /// What changes when a file is written or replaced; nil for a missing file.
    static func signature(_ path: String) -> [Int]? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        #if os(Linux)
            let time = [Int(info.st_mtim.tv_sec), Int(info.st_mtim.tv_nsec)]
        #else
            let time = [Int(info.st_mtimespec.tv_sec), Int(info.st_mtimespec.tv_nsec)]
        #endif
        return time + [Int(info.st_size), Int(info.st_ino)]
    }
}
