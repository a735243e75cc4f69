import Foundation
import KakapoTestSupport
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Debian's tinyproxy as the corporate proxy in front of the upstreams: started by a test on a free
/// loopback port with a generated configuration (Basic credentials when given), in the foreground, its
/// log in a folder of its own. `tools/tinyproxy.sh install` (run by tools/test.sh) installs it.
final class TinyProxy: Sendable {
    struct Failure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    let port: Int
    let logPath: String
    private let process: KakapoProcess

    /// Where the binary is; nil when tinyproxy is not installed.
    static let binary: String? = ["/usr/bin/tinyproxy", "/usr/sbin/tinyproxy", "/usr/local/bin/tinyproxy"].first {
        FileManager.default.isExecutableFile(atPath: $0)
    }

    /// Whether the tests that need tinyproxy run: when it is installed, and always under CI=true (where a
    /// missing binary fails them instead of skipping them).
    static var shouldRun: Bool { binary != nil || ProcessInfo.processInfo.environment["CI"] == "true" }

    static func start(user: String? = nil, password: String? = nil) async throws -> TinyProxy {
        guard let binary else {
            throw TinyProxy.Failure("tinyproxy is not installed: run tools/tinyproxy.sh install")
        }
        let directory = try Fixtures.temporaryDirectory()
        // A port nobody listens on: reserved by a ClosedPort, released when it goes.
        let port = try ClosedPort().port
        let logPath = directory + "/tinyproxy.log"
        var configuration = """
            Port \(port)
            Listen 127.0.0.1
            Timeout 30
            LogFile "\(logPath)"
            LogLevel Connect
            MaxClients 64
            Allow 127.0.0.1
            DisableViaHeader Yes

            """
        if let user, let password { configuration += "BasicAuth \(user) \(password)\n" }
        try configuration.write(toFile: directory + "/tinyproxy.conf", atomically: true, encoding: .utf8)
        // Run as root (a container), tinyproxy keeps the current user; its log folder must be writable.
        chmod(directory, 0o777)
        let process = try KakapoProcess(["-d", "-c", directory + "/tinyproxy.conf"], executable: binary)
        let deadline = ContinuousClock.now + .seconds(10)
        while (try? RawConnection(port: port, timeout: 1)) == nil {
            guard ContinuousClock.now < deadline else {
                throw TinyProxy.Failure("tinyproxy did not listen: \(process.standardError)")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        return TinyProxy(port: port, logPath: logPath, process: process)
    }

    private init(port: Int, logPath: String, process: KakapoProcess) {
        self.port = port
        self.logPath = logPath
        self.process = process
    }

    /// `http://[credentials@]127.0.0.1:PORT`.
    func url(credentials: String? = nil) -> String {
        "http://" + (credentials.map { $0 + "@" } ?? "") + "127.0.0.1:\(port)"
    }

    /// What tinyproxy logged: one `Request (file descriptor N): GET http://... HTTP/1.1` or `CONNECT
    /// host:port HTTP/1.1` line per request it took.
    var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    /// Set once `stop` has ended it.
    private let stopped = Mutex(false)

    /// A test that fails before `stop` must not leave tinyproxy running (it outlives SIGTERM).
    deinit {
        if !stopped.withLock({ $0 }) { process.send(SIGKILL) }
    }

    /// Ends tinyproxy (SIGKILL: on SIGTERM it waits out connections its clients keep alive).
    func stop() async throws {
        stopped.withLock { $0 = true }
        process.send(SIGKILL)
        _ = try await process.waitForExit()
    }
}
