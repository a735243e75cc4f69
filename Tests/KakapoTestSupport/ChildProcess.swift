import CTestSpawn
import Foundation
import NIOConcurrencyHelpers

#if canImport(Glibc)
    import Glibc
    private let systemPipe = Glibc.pipe
#else
    import Darwin
    private let systemPipe = Darwin.pipe
#endif

/// A child process started with posix_spawn (`kakapo_test_spawn`), its standard output and error read on
/// threads of their own. It replaces Foundation's `Process` in the tests: on Linux that crashes now and
/// then in `Process.run` once the test process holds over a thousand descriptors (an over-read in
/// Foundation's `findMaximumOpenFromProcSelfFD`, Swift 6.3.1), which the parallel suite reaches.
final class ChildProcess: Sendable {
    let processIdentifier: pid_t
    /// nil while running; then the exit code, or the signal that ended it.
    private let status = NIOLockedValueBox<Int32?>(nil)
    /// How many of standard output and error were read to their end.
    private let ended = NIOLockedValueBox(0)

    /// Starts `executable` with `arguments` in `directory`; `onOutput` and `onError` get what it writes.
    init(
        executable: String, arguments: [String], directory: String?,
        onOutput: @escaping @Sendable ([UInt8]) -> Void, onError: @escaping @Sendable ([UInt8]) -> Void
    ) throws {
        let outputPipe = try ChildProcess.pipe()
        let errorPipe = try ChildProcess.pipe()
        var pid: pid_t = 0
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let failure = argv.withUnsafeBufferPointer { pointers in
            kakapo_test_spawn(&pid, executable, pointers.baseAddress, directory, outputPipe.write, errorPipe.write)
        }
        close(outputPipe.write)
        close(errorPipe.write)
        guard failure == 0 else {
            close(outputPipe.read)
            close(errorPipe.read)
            throw KakapoProcess.Failure(
                description: "cannot start \(executable): \(String(cString: strerror(failure)))")
        }
        processIdentifier = pid
        let ended = self.ended
        ChildProcess.drain(outputPipe.read, into: onOutput) { ended.withLockedValue { $0 += 1 } }
        ChildProcess.drain(errorPipe.read, into: onError) { ended.withLockedValue { $0 += 1 } }
    }

    /// Whether everything the process (and any child still holding its pipes) wrote has been handed on.
    var outputEnded: Bool { ended.withLockedValue { $0 == 2 } }

    /// Whether the process still runs (it is reaped once it ended).
    var isRunning: Bool { currentStatus == nil }

    /// The exit code, or the number of the signal that ended it; 0 while it runs.
    var terminationStatus: Int32 { currentStatus ?? 0 }

    func terminate() { kill(processIdentifier, SIGTERM) }

    private var currentStatus: Int32? {
        status.withLockedValue { status in
            if status != nil { return status }
            var raw: Int32 = 0
            guard waitpid(processIdentifier, &raw, WNOHANG) == processIdentifier else { return nil }
            // WIFEXITED / WEXITSTATUS / WTERMSIG, which Swift does not import as functions.
            let signal = raw & 0x7F
            status = signal == 0 ? (raw >> 8) & 0xFF : signal
            return status
        }
    }

    private static func pipe() throws -> (read: Int32, write: Int32) {
        var ends: [Int32] = [0, 0]
        guard systemPipe(&ends) == 0 else { throw KakapoProcess.Failure(description: "cannot make a pipe") }
        // Children spawned here close every descriptor past 2 themselves; this is for those started elsewhere.
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        return (ends[0], ends[1])
    }

    /// Reads `descriptor` to its end on a thread of its own, handing each piece on, then closes it and
    /// calls `atEnd`.
    private static func drain(
        _ descriptor: Int32, into handler: @escaping @Sendable ([UInt8]) -> Void,
        atEnd: @escaping @Sendable () -> Void
    ) {
        Thread {
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                if count < 0 && errno == EINTR { continue }
                if count <= 0 { break }
                handler(Array(buffer[0..<count]))
            }
            close(descriptor)
            atEnd()
        }.start()
    }
}
