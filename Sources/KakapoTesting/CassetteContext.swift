import Foundation
import KakapoProxy
import KakapoURLSession

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

    /// The cassette of the test running now, inside a `.cassette` trait.
    @TaskLocal public static var current: CassetteContext?

    /// `http://127.0.0.1:PORT` of a server on a free port answering through the same pipeline (started on
    /// first use), for AsyncHTTPClient, subprocesses and anything that is not URLSession.
    public func baseURL() async throws -> URL {
        if let port = kakapo.server.port { return URL(string: "http://127.0.0.1:\(port)")! }
        let port = try await kakapo.server.start(port: 0)
        return URL(string: "http://127.0.0.1:\(port)")!
    }
}
