import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#else
    import Darwin
#endif

/// The command `kakapo exec` runs: spawned with Kakapo's standard input, output and error (the
/// terminal's), sent the signals Kakapo receives, and waited for.
///
/// Signals: SIGINT, SIGTERM, SIGHUP and SIGQUIT sent to Kakapo (`kill PID`) are passed on to the command.
/// Those the kernel sends to the terminal's whole foreground process group (Ctrl-C, Ctrl-\, a hang-up)
/// have reached the command already, as it is in Kakapo's group: they are not sent a second time. One
/// that arrives before the command starts keeps it from starting.
enum ExecChild {
    /// How the command ended.
    enum Ending: Sendable, Equatable {
        case exited(Int32)
        case killed(signal: Int32)

        /// The status a shell gives it: the exit status, or 128 + the signal.
        var status: Int32 {
            switch self {
            case .exited(let status): return status
            case .killed(let signal): return 128 + signal
            }
        }
    }

    /// Why the command could not be started.
    struct SpawnError: Error, CustomStringConvertible {
        let command: String
        let code: Int32

        var description: String {
            code == ENOENT ? "\(command): command not found" : "\(command): \(String(cString: strerror(code)))"
        }

        /// What a shell exits with: 127 for a command not found, 126 for one that cannot run.
        var status: Int32 { code == ENOENT ? 127 : 126 }
    }

    static let relayedSignals: [Int32] = [SIGINT, SIGTERM, SIGHUP, SIGQUIT]

    /// Who gets the signals: nobody yet (they are kept), the running command, or nobody any more.
    private enum Target {
        case starting(pending: Int32?)
        case running(pid_t)
        case ended
    }

    private static let target = Mutex(Target.starting(pending: nil))

    /// The descriptors open before Kakapo opened any: the command inherits those (a parent's jobserver pipe,
    /// say), and none of Kakapo's own (its sockets, its libraries').
    private static let inherited = Mutex<Set<Int32>>([])

    /// Catches the relayed signals from now on (call it before the server starts, so none is lost) and
    /// starts the thread that passes them on; notes the descriptors open so far.
    static func installSignalRelay() {
        inherited.withLock { $0 = Set(openDescriptors()) }
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else { return }
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        relayDescriptor = ends[1]
        let reader = ends[0]
        Thread {
            var byte: UInt8 = 0
            while true {
                let count = read(reader, &byte, 1)
                if count < 0 && errno == EINTR { continue }
                if count <= 0 { return }
                relay(signal: Int32(byte & 0x7F), fromTerminal: byte & 0x80 != 0)
            }
        }.start()
        for signal in relayedSignals {
            var action = sigaction()
            #if canImport(Glibc)
                action.__sigaction_handler.sa_sigaction = relaySignalHandler
            #else
                action.__sigaction_u.__sa_sigaction = relaySignalHandler
            #endif
            action.sa_flags = SA_SIGINFO | SA_RESTART
            sigemptyset(&action.sa_mask)
            sigaction(signal, &action, nil)
        }
    }

    private static func relay(signal: Int32, fromTerminal: Bool) {
        target.withLock { target in
            switch target {
            case .starting(let pending):
                if pending == nil { target = .starting(pending: signal) }
            case .running(let pid):
                if !fromTerminal { kill(pid, signal) }
            case .ended:
                break
            }
        }
    }

    /// How a run went: the command ended, or a relayed signal arrived before it started (so it was not).
    enum Outcome: Sendable, Equatable {
        case ended(Ending)
        case interrupted(signal: Int32)
    }

    /// Runs `arguments` (the first found on `PATH`) with `environment` and waits for it to end.
    static func run(_ arguments: [String], environment: [String: String]) async throws(SpawnError) -> Outcome {
        enum Start {
            case spawned(pid_t)
            case interrupted(Int32)
            case failed(SpawnError)
        }
        // Spawned under the lock: a signal is either kept for the start or sent to the command.
        let start: Start = target.withLock { target in
            if case .starting(let pending?) = target {
                target = .ended
                return .interrupted(pending)
            }
            do throws(SpawnError) {
                let pid = try spawn(arguments, environment: environment)
                target = .running(pid)
                return .spawned(pid)
            } catch {
                target = .ended
                return .failed(error)
            }
        }
        switch start {
        case .interrupted(let signal):
            return .interrupted(signal: signal)
        case .failed(let error):
            throw error
        case .spawned(let pid):
            let ending = await withCheckedContinuation { continuation in
                Thread { continuation.resume(returning: wait(for: pid)) }.start()
            }
            return .ended(ending)
        }
    }

    /// Waits for `pid` to end; stops passing signals to it before reaping it, so none can reach another
    /// process that gets its number afterwards.
    private static func wait(for pid: pid_t) -> Ending {
        var info = siginfo_t()
        while waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) != 0 && errno == EINTR {}
        target.withLock { $0 = .ended }
        var raw: Int32 = 0
        while waitpid(pid, &raw, 0) < 0 && errno == EINTR {}
        // WIFEXITED / WEXITSTATUS / WTERMSIG, which Swift does not import as functions.
        let signal = raw & 0x7F
        return signal == 0 ? .exited((raw >> 8) & 0xFF) : .killed(signal: signal)
    }

    /// The open descriptors past standard error (from /proc/self/fd, or /dev/fd).
    private static func openDescriptors() -> [Int32] {
        let names =
            (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd"))
            ?? (try? FileManager.default.contentsOfDirectory(atPath: "/dev/fd")) ?? []
        return names.compactMap { Int32($0) }.filter { $0 > 2 }
    }

    /// Marks Kakapo's own descriptors close-on-exec (most are already), so the command gets none of them.
    private static func closeOwnDescriptorsOnExec() {
        let keep = inherited.withLock { $0 }
        for descriptor in openDescriptors() where !keep.contains(descriptor) {
            let flags = fcntl(descriptor, F_GETFD)
            if flags >= 0 && flags & FD_CLOEXEC == 0 { _ = fcntl(descriptor, F_SETFD, flags | FD_CLOEXEC) }
        }
    }

    /// posix_spawnp with the relayed signals and SIGPIPE at their defaults, no signal blocked, and none of
    /// Kakapo's own descriptors.
    private static func spawn(_ arguments: [String], environment: [String: String]) throws(SpawnError) -> pid_t {
        let command = arguments[0]
        let argv = arguments.map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        #if canImport(Glibc)
            var attributes = posix_spawnattr_t()
            var actions = posix_spawn_file_actions_t()
        #else
            var attributes: posix_spawnattr_t?
            var actions: posix_spawn_file_actions_t?
        #endif
        posix_spawnattr_init(&attributes)
        posix_spawn_file_actions_init(&actions)
        defer {
            posix_spawnattr_destroy(&attributes)
            posix_spawn_file_actions_destroy(&actions)
        }
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in relayedSignals + [SIGPIPE] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        var mask = sigset_t()
        sigemptyset(&mask)
        posix_spawnattr_setsigmask(&attributes, &mask)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))
        closeOwnDescriptorsOnExec()
        var pid: pid_t = 0
        let code = posix_spawnp(&pid, command, &actions, &attributes, argv, envp)
        guard code == 0 else { throw SpawnError(command: command, code: code) }
        return pid
    }
}

/// Where the signal handler writes: set once, before the handler is installed.
nonisolated(unsafe) private var relayDescriptor: Int32 = -1

/// Writes the signal's number to the relay pipe, with the high bit set when the kernel sent it to the
/// terminal's process group (async-signal-safe: `write` only).
private func relaySignalHandler(
    _ signal: Int32, _ info: UnsafeMutablePointer<siginfo_t>?, _ context: UnsafeMutableRawPointer?
) {
    let saved = errno
    #if canImport(Glibc)
        let fromTerminal = info.map { Int($0.pointee.si_code) == Int(SI_KERNEL) } ?? false
    #else
        let fromTerminal = info.map { $0.pointee.si_pid == 0 } ?? false
    #endif
    var byte = UInt8(truncatingIfNeeded: signal & 0x7F) | (fromTerminal ? 0x80 : 0)
    _ = write(relayDescriptor, &byte, 1)
    errno = saved
}
