/// Where and how the upstream is reached.
public struct UpstreamConfiguration: Sendable {
    /// The upstream's base URL: `http(s)://host[:port][/prefix]`. Request targets are appended to it.
    public var baseURL: String
    /// Seconds allowed to establish a connection.
    public var connectTimeout: Double
    /// Seconds allowed for a whole exchange.
    public var timeout: Double
    /// Turns TLS certificate verification off (`--insecure`).
    public var insecure: Bool
    /// The largest response body accepted, in bytes; a larger one fails with `responseTooLarge`.
    public var maximumResponseBytes: Int
    /// How many requests may be in flight upstream at once (one libcurl handle and thread each).
    public var maximumConcurrentRequests: Int
    /// A PEM file of CA certificates trusted for upstream TLS besides the system's (`--upstream-ca`): for
    /// private APIs and test servers.
    public var additionalCAFile: String?
    /// Ignores `http_proxy`, `https_proxy` and `all_proxy`, which libcurl otherwise follows. A forward
    /// proxy sets it: its clients' environment usually points at the proxy itself.
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
