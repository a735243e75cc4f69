import KakapoHTTP

/// Sends requests to one upstream through libcurl, off the caller's thread (design section 6).
///
/// Redirects are not followed, bodies are not decompressed, hop-by-hop headers are dropped, `Host` names
/// the upstream, and repeated response headers stay separate. Connections are reused.
public final class UpstreamClient: Sendable {
    public let configuration: UpstreamConfiguration
    public let url: UpstreamURL
    private let pool: CurlWorkerPool

    /// Creates a client; throws `invalidURL` when the base URL is not `http(s)://host[:port][/prefix]`.
    public init(configuration: UpstreamConfiguration) throws(UpstreamError) {
        guard let url = UpstreamURL(configuration.baseURL) else {
            throw UpstreamError(
                code: .invalidURL,
                message: "\"\(configuration.baseURL)\" is not an http:// or https:// URL with a host")
        }
        self.configuration = configuration
        self.url = url
        self.pool = CurlWorkerPool(configuration: configuration)
    }

    /// The request as it will go upstream: hop-by-hop headers dropped, `Host` set to the upstream's
    /// authority. This is also what a recording stores.
    public func prepare(_ request: HTTPRequest) -> HTTPRequest {
        var prepared = request
        var headers = HopByHopHeaders.removing(from: request.headers)
        headers.replaceOrAdd(name: "Host", value: url.authority)
        prepared.headers = headers
        return prepared
    }

    /// Sends a prepared request and calls `completion` on a libcurl worker thread.
    public func send(
        _ prepared: HTTPRequest, completion: @escaping @Sendable (Result<HTTPResponse, UpstreamError>) -> Void
    ) {
        pool.submit(.init(request: prepared, url: url.url(for: prepared.target), completion: completion))
    }

    /// Sends a prepared request and waits for the response.
    public func send(_ prepared: HTTPRequest) async throws(UpstreamError) -> HTTPResponse {
        let result = await withCheckedContinuation { continuation in
            send(prepared) { continuation.resume(returning: $0) }
        }
        return try result.get()
    }

    /// Waits for requests in flight, then stops the worker threads.
    public func shutdown() { pool.shutdown() }
}
