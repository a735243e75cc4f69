import Foundation
import KakapoEngine
import KakapoProxy
import KakapoURLSession
import Synchronization

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// What a test gets from its cassette: a `URLSession` answered in process and, for any other client, a
/// socket server on port 0 answering through the same pipeline.
public struct CassetteContext: Sendable {
    /// The in-process pipeline; add routes or resources to it as in any Kakapo.
    public let kakapo: InProcessKakapo
    /// The cassette file.
    public let path: String
    /// The mode the test runs in (`once` resolved: `none` when the file existed, `new` when it did not).
    public let mode: ProxyMode
    /// A session whose requests Kakapo answers, with no socket.
    public let session: URLSession
    /// The socket server `baseURL()` starts on first use, sharing the in-process engine.
    let socket = SocketServer()

    init(kakapo: InProcessKakapo, path: String, mode: ProxyMode, session: URLSession) {
        self.kakapo = kakapo
        self.path = path
        self.mode = mode
        self.session = session
    }

    /// The cassette of the test running now, inside a `.cassette` trait.
    @TaskLocal public static var current: CassetteContext?

    /// `http://127.0.0.1:PORT` of a server on a free port answering through the same pipeline (started on
    /// first use), for AsyncHTTPClient, subprocesses and anything that is not URLSession.
    public func baseURL() async throws -> URL {
        let port = try await socket.port(for: kakapo.engine)
        return URL(string: "http://127.0.0.1:\(port)")!
    }
}

/// The socket server of one test's cassette, made and started on first use (so a test that never asks
/// for a URL starts no event-loop threads) and stopped with the test.
final class SocketServer: Sendable {
    private let server = Mutex<(server: ProxyServer, started: Task<Int, any Error>)?>(nil)

    /// The port of the server answering through `engine`, started now if it is not yet (once, however
    /// many callers ask at the same time).
    func port(for engine: Engine) async throws -> Int {
        let started = server.withLock { server -> Task<Int, any Error> in
            if let server { return server.started }
            let made = ProxyServer(sharing: engine)
            let started = Task { try await made.start(port: 0) }
            server = (made, started)
            return started
        }
        return try await started.value
    }

    /// Stops the server, if one was started; the engine goes on.
    func stop() async {
        let running = server.withLock { server in
            defer { server = nil }
            return server
        }
        _ = try? await running?.started.value
        await running?.server.shutdown()
    }
}
