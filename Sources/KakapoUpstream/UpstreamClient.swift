import Foundation
import KakapoHTTP
import Synchronization

/// Sends requests upstream through libcurl, off the caller's thread (design section 6): to one base URL
/// (`--upstream`), or, for requests that name their origin (a forward proxy's), to that origin.
///
/// Redirects are not followed, bodies are not decompressed, hop-by-hop headers are dropped, `Host` names
/// the upstream, and repeated response headers stay separate. Connections are reused.
public final class UpstreamClient: Sendable {
    public let configuration: UpstreamConfiguration
    /// The base URL requests without an origin go to; nil for a client that only forwards requests
    /// naming their origin.
    public let url: UpstreamURL?
    /// The upstream proxies in force: `configuration.proxies`, or those the environment named when the
    /// client was made.
    public let proxies: UpstreamProxies
    /// The proxy requests to the base URL go through (worked out once).
    private let baseProxy: UpstreamProxy?
    /// One transfer loop per core; requests are spread over them in turn.
    private let loops: [CurlMultiLoop]
    private let next = Atomic<Int>(0)
    /// Whether `hostSignatureWarning(for:)` has given its one warning.
    private let warnedOfHostSignature = Atomic<Bool>(false)

    /// Creates a client. An empty base URL makes a forwarding-only client; throws `invalidURL` when the
    /// base URL is not `http(s)://host[:port][/prefix]` or `h2c://...`, and `tlsFailure` when the
    /// additional CA file cannot be read.
    public init(configuration: UpstreamConfiguration) throws(UpstreamError) {
        if configuration.baseURL.isEmpty {
            self.url = nil
        } else {
            guard let url = UpstreamURL(configuration.baseURL) else {
                throw UpstreamError(
                    code: .invalidURL,
                    message: "\"\(configuration.baseURL)\" is not an http://, https:// or h2c:// URL with a host")
            }
            self.url = url
        }
        self.configuration = configuration
        var proxies = configuration.proxies ?? .direct
        if configuration.proxies == nil && !configuration.ignoresProxyEnvironment {
            proxies = try UpstreamProxies.fromEnvironment(ProcessInfo.processInfo.environment)
        }
        self.proxies = proxies
        // An h2c:// upstream goes through the proxy of http:// ones (tunnelled: see `CurlHandle`).
        self.baseProxy = url.flatMap { proxies.proxy(for: $0.url(for: "/")) }
        let caBundle = try CABundle.load(configuration)
        let count = max(1, min(ProcessInfo.processInfo.activeProcessorCount, 8))
        let connections = max(1, configuration.maximumConcurrentRequests / count)
        var loops: [CurlMultiLoop] = []
        for _ in 0..<count {
            guard let loop = CurlMultiLoop(configuration: configuration, caBundle: caBundle, connections: connections)
            else { throw UpstreamError(code: .other, message: "libcurl could not create a multi handle") }
            loops.append(loop)
        }
        self.loops = loops
    }

    /// Where `request` goes: its own origin when it names one, else the base URL; nil when neither.
    public func destination(of request: HTTP.Request) -> String? {
        if let origin = request.origin { return origin }
        return url?.description
    }

    /// The request as it will go upstream: hop-by-hop headers dropped (but `TE: trailers`, which gRPC
    /// servers require), `Host` set to the upstream's authority (the client's kept with `preservesHost`).
    /// This is also what a recording stores.
    public func prepare(_ request: HTTP.Request) -> HTTP.Request {
        var prepared = request
        var headers = HopByHopHeaders.removing(fromRequest: request.headers)
        if let origin = request.origin {
            headers.replaceOrAdd(name: "Host", value: RequestOrigin.authority(of: origin))
        } else if let url, !(configuration.preservesHost && headers.contains("Host")) {
            headers.replaceOrAdd(name: "Host", value: url.authority)
        }
        headers.remove(name: "Proxy-Authorization")
        prepared.headers = headers
        return prepared
    }

    /// The warning (`HostSignature.warning`) for a request, not yet prepared, that is signed over a `Host`
    /// this client is about to replace with the base URL's; given once per client, nil after and for every
    /// other request.
    public func hostSignatureWarning(for request: HTTP.Request) -> String? {
        guard request.origin == nil, let url, !configuration.preservesHost,
            !warnedOfHostSignature.load(ordering: .relaxed),
            let warning = HostSignature.warning(for: request, upstreamHost: url.authority),
            !warnedOfHostSignature.exchange(true, ordering: .relaxed)
        else { return nil }
        return warning
    }

    /// Sends a prepared request and calls `completion` on a transfer loop's thread. `onStream`, when
    /// given, hears about an answer that streams (server-sent events; a body of unknown length or larger
    /// than `streamingThreshold`) as it arrives, on the same thread, before `completion` reports its end;
    /// it answers `.pause` to hold the transfer until the head's `TransferResumer` is called, or `.stop`
    /// to abandon it, and must not block. A streamed body reaches the completion only with
    /// `keepsStreamedBody`. With a `bodyStream`, the body is sent as it arrives from the client instead
    /// of `prepared.body`.
    public func send(
        _ prepared: HTTP.Request, bodyStream: RequestBodyStream? = nil, keepsStreamedBody: Bool = true,
        onStream: (@Sendable (UpstreamStreamEvent) -> StreamDisposition)? = nil,
        completion: @escaping @Sendable (Result<HTTP.Response, UpstreamError>) -> Void
    ) {
        let target: String
        let proxy: UpstreamProxy?
        var priorKnowledge = false
        if let origin = prepared.origin {
            target = origin + prepared.target
            proxy = proxies.proxy(for: origin)
        } else if let url {
            target = url.url(for: prepared.target)
            proxy = baseProxy
            priorKnowledge = url.usesHTTP2PriorKnowledge
        } else {
            completion(
                .failure(
                    UpstreamError(
                        code: .invalidURL,
                        message:
                            "the request names no host (\(prepared.method) \(prepared.target)): a forward proxy needs an absolute URL or CONNECT, or give --upstream"
                    )))
            return
        }
        let index = next.add(1, ordering: .relaxed).oldValue % loops.count
        loops[index].submit(
            .init(
                request: prepared, url: target, proxy: proxy, http2PriorKnowledge: priorKnowledge,
                keepsStreamedBody: keepsStreamedBody, onStream: onStream, bodyStream: bodyStream,
                completion: completion))
    }

    /// Sends a prepared request and waits for the response.
    public func send(_ prepared: HTTP.Request) async throws(UpstreamError) -> HTTP.Response {
        let result = await withCheckedContinuation { continuation in
            send(prepared) { continuation.resume(returning: $0) }
        }
        return try result.get()
    }

    /// Waits for requests in flight, then stops the transfer loops.
    public func shutdown() {
        for loop in loops { loop.shutdown() }
    }
}
