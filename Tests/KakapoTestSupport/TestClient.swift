import KakapoHTTP
import KakapoUpstream

/// A real HTTP client (libcurl) for talking to a Kakapo under test: it follows no redirects and
/// decompresses nothing, so tests see exactly what Kakapo sent.
public struct TestClient: Sendable {
    public let client: UpstreamClient

    public init(port: Int) throws {
        client = try UpstreamClient(
            configuration: UpstreamConfiguration(baseURL: "http://127.0.0.1:\(port)", timeout: 30))
    }

    /// Sends a request with exactly these headers (plus `Host`).
    public func send(
        _ method: HTTP.Method = .get, _ target: String, headers: HTTP.Headers = HTTP.Headers(), body: [UInt8] = []
    ) async throws -> HTTP.Response {
        try await client.send(
            client.prepare(HTTP.Request(method: method, target: target, headers: headers, body: body)))
    }

    public func shutdown() { client.shutdown() }
}

extension HTTP.Response {
    /// The body as UTF-8 text.
    public var text: String { String(decoding: body, as: UTF8.self) }
}
