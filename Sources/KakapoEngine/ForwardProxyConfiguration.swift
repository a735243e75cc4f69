import KakapoRecordFilter

/// How Kakapo works as a forward proxy (`--proxy`): clients send absolute URLs (`GET http://host/path`)
/// and `CONNECT host:port`, and each request names its own upstream.
public struct ForwardProxyConfiguration: Sendable {
    /// Hosts whose `CONNECT` tunnels are decrypted and answered like any request (`api.example.com`, or
    /// `*.example.com` for every subdomain); empty intercepts every host. Other tunnels are blind: bytes
    /// pass through untouched, so pinned hosts keep working. Decrypting needs `ServerTLS.interception` on the
    /// server; without it every tunnel is blind.
    public var intercept: [String]
    /// Seconds allowed to connect a blind tunnel to its host.
    public var tunnelConnectTimeout: Double
    /// The credentials clients must give (`--proxy-auth`): absolute-form requests, `CONNECT`s and WebSocket
    /// upgrades in absolute form without them get 407. Requests inside a decrypted tunnel were authorised by
    /// its `CONNECT`; origin-form requests (the admin API, and requests for `--upstream`) are not proxy
    /// requests and keep their own rules. Nil: no credentials asked.
    public var credentials: ProxyCredentials?

    public init(intercept: [String] = [], tunnelConnectTimeout: Double = 10, credentials: ProxyCredentials? = nil) {
        self.intercept = intercept
        self.tunnelConnectTimeout = tunnelConnectTimeout
        self.credentials = credentials
    }

    /// Whether a tunnel to `host` is decrypted (when the server can decrypt: `ServerTLS.interception`).
    public func intercepts(_ host: String) -> Bool {
        if intercept.isEmpty { return true }
        let host = host.lowercased()
        return intercept.contains { HostPattern(name: $0).matches(host) }
    }
}
