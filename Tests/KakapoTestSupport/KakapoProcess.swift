import Foundation
import NIOConcurrencyHelpers

/// The built `kakapo` binary run as a child process, as a user would run it.
public final class KakapoProcess: Sendable {
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    private let process: ChildProcess
    /// The program's name, for failures.
    private let executableName: String
    private let output = NIOLockedValueBox<[UInt8]>([])
    private let errors = NIOLockedValueBox<[UInt8]>([])

    /// The path of the built `kakapo` binary (`KAKAPO_BINARY` overrides it).
    public static var binary: String {
        if let path = ProcessInfo.processInfo.environment["KAKAPO_BINARY"] { return path }
        return builtProduct("kakapo")
    }

    /// The path of a product SwiftPM built next to the test binary.
    public static func builtProduct(_ name: String) -> String {
        #if os(Linux)
            let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? ""
        #else
            let executable = Bundle.main.executablePath ?? ""
        #endif
        var directory = URL(fileURLWithPath: executable).deletingLastPathComponent()
        // On macOS the test binary sits inside a .xctest bundle.
        while directory.path.contains(".xctest") { directory.deleteLastPathComponent() }
        return directory.appendingPathComponent(name).path
    }

    /// Starts `kakapo` (or another built `executable`) with `arguments` in `directory`.
    public init(_ arguments: [String], directory: String? = nil, executable: String = KakapoProcess.binary) throws {
        let output = self.output
        let errors = self.errors
        executableName = URL(fileURLWithPath: executable).lastPathComponent
        process = try ChildProcess(
            executable: executable, arguments: arguments, directory: directory,
            onOutput: { bytes in output.withLockedValue { $0.append(contentsOf: bytes) } },
            onError: { bytes in errors.withLockedValue { $0.append(contentsOf: bytes) } })
    }

    /// A test that fails before stopping its process must not leave it running.
    deinit {
        if process.isRunning { process.terminate() }
    }

    /// The process's resident memory and its peak so far, in bytes (VmRSS and VmHWM); nil where /proc
    /// does not tell (macOS).
    public var memory: (resident: Int, peak: Int)? {
        guard let status = try? String(contentsOfFile: "/proc/\(process.processIdentifier)/status", encoding: .utf8)
        else { return nil }
        func kilobytes(_ field: String) -> Int? {
            guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix(field + ":") }) else {
                return nil
            }
            return line.split(separator: " ").dropFirst().first.flatMap { Int($0) }
        }
        guard let resident = kilobytes("VmRSS"), let peak = kilobytes("VmHWM") else { return nil }
        return (resident << 10, peak << 10)
    }

    /// Everything written to standard output so far.
    public var standardOutput: String { output.withLockedValue { String(decoding: $0, as: UTF8.self) } }
    /// Everything written to standard error so far.
    public var standardError: String { errors.withLockedValue { String(decoding: $0, as: UTF8.self) } }

    /// Waits for the `kakapo listening on http(s)://HOST:PORT` line and returns the port.
    public func waitUntilListening(timeout: Duration = .seconds(30)) async throws -> Int {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            let text = standardOutput
            if let line = text.split(separator: "\n").first(where: { $0.contains(" listening on http") }),
                let port = line.split(separator: ":").last.flatMap({ Int($0) })
            {
                return port
            }
            if !process.isRunning {
                throw Failure(
                    description: "kakapo exited with \(process.terminationStatus) before listening: \(standardError)")
            }
            try await Task.sleep(for: .milliseconds(10))
        }
        throw Failure(description: "kakapo did not print its listening line within \(timeout): \(standardError)")
    }

    /// Sends a signal (SIGINT, SIGTERM, SIGKILL).
    public func send(_ signal: Int32) { kill(process.processIdentifier, signal) }

    /// Waits for the process to end and returns its exit status.
    public func waitForExit(timeout: Duration = .seconds(30)) async throws -> Int32 {
        let deadline = ContinuousClock.now + timeout
        while process.isRunning {
            if ContinuousClock.now > deadline {
                process.terminate()
                // What it said last tells a hang at shutdown (no "received SIGINT") from a slow save.
                throw Failure(
                    description: "\(executableName) did not exit within \(timeout); its standard error ends: "
                        + String(standardError.suffix(3000)))
            }
            try await Task.sleep(for: .milliseconds(10))
        }
        // Let the pipe readers hand on what the process wrote last: until both pipes end (a fixed pause
        // lost a peer's last output on a loaded machine), or, when a child it left behind still holds them
        // open, for at most two seconds.
        let drained = ContinuousClock.now + .seconds(2)
        while !process.outputEnded && ContinuousClock.now < drained {
            try await Task.sleep(for: .milliseconds(5))
        }
        return process.terminationStatus
    }

    /// Runs `executable` to completion on the calling thread (for synchronous callers, not the test pool)
    /// and returns its exit status; its output is discarded.
    public static func runBlocking(_ arguments: [String], executable: String) throws -> Int32 {
        let process = try ChildProcess(
            executable: executable, arguments: arguments, directory: nil, onOutput: { _ in }, onError: { _ in })
        while process.isRunning { usleep(10_000) }
        return process.terminationStatus
    }

    /// Runs `kakapo` (or `executable`) to completion, failing after `timeout`, and returns its status,
    /// standard output and standard error.
    public static func run(
        _ arguments: [String], directory: String? = nil, executable: String = KakapoProcess.binary,
        timeout: Duration = .seconds(30)
    ) async throws -> (status: Int32, output: String, error: String) {
        let process = try KakapoProcess(arguments, directory: directory, executable: executable)
        let status = try await process.waitForExit(timeout: timeout)
        return (status, process.standardOutput, process.standardError)
    }
}
