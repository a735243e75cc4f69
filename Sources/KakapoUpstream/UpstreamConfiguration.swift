/// Where and how the upstream is reached.
public struct UpstreamConfiguration: Sendable {
    /// The upstream's base URL: `http(s)://host[:port][/prefix]`. Request targets are appended to it.
    public var baseURL: String
    /// Seconds allowed to establish a connection.
    public var connectTimeout: Double
    /// Seconds allowed for a whole exchange; for a streamed answer, seconds allowed until its head and
    /// then between two pieces of its body (a stream may last as long as it keeps sending).
    public var timeout: Double
    /// Turns TLS certificate verification off (`--insecure`).
    public var insecure: Bool
    /// The largest response body kept, in bytes: a larger buffered one fails with `responseTooLarge`; a
    /// larger streamed one goes on streaming without being kept (`UpstreamStreamEvent.tooLargeToKeep`).
    public var maximumResponseBytes: Int
    /// Bodies announced larger than this, or of unknown length (chunked), stream to a listener as they
    /// arrive instead of being buffered whole; server-sent events always stream.
    public var streamingThreshold: Int = 1 << 20
    /// How many upstream transfers may move at once, over all transfer loops (more wait their turn). A
    /// transfer held by its client (an answer it does not read, a body it does not send) does not count,
    /// and one held longer than `timeout` is abandoned: clients that stall never hold back others.
    public var maximumConcurrentRequests: Int
    /// A PEM file of CA certificates trusted for upstream TLS besides the system's (`--upstream-ca`): for
    /// private APIs and test servers.
    public var additionalCAFile: String?
    /// The upstream proxies (`--upstream-proxy`, `--no-proxy`, or the environment as the CLI read it); nil
    /// reads `http_proxy`, `https_proxy` and `no_proxy` when the client is made, unless
    /// `ignoresProxyEnvironment`. libcurl never reads the environment itself.
    public var proxies: UpstreamProxies?
    /// Sends the client's `Host` to the base URL unchanged (`--preserve-host`) instead of the upstream's
    /// authority: for requests signed over `Host` (AWS SigV4, Google Cloud Storage V4) by a client that
    /// signs for Kakapo's address. A request without `Host` still gets the upstream's.
    public var preservesHost: Bool = false
    /// With `proxies` nil, goes direct instead of reading the proxy variables of the environment. A forward
    /// proxy embedded without the CLI sets it: its clients' environment usually points at the proxy itself.
    public var ignoresProxyEnvironment: Bool = false

    /// `baseURL` empty makes a client that only forwards requests naming their origin (a forward proxy).
    public init(
        baseURL: String, connectTimeout: Double = 10, timeout: Double = 60, insecure: Bool = false,
        maximumResponseBytes: Int = 256 << 20, maximumConcurrentRequests: Int = 64
    ) {
        self.baseURL = baseURL
        self.connectTimeout = connectTimeout
        self.timeout = timeout
        self.insecure = insecure
        self.maximumResponseBytes = maximumResponseBytes
        self.maximumConcurrentRequests = maximumConcurrentRequests
    }
}
