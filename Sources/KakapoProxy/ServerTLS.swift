/// TLS for the NIO server, kept out of `ProxyConfiguration` (which names no NIO type): `KakapoTLS` provides
/// the implementations, so this module needs no TLS library.
public struct ServerTLS: Sendable {
    /// Answers TLS on the listening port (`--tls`, `--tls-cert`/`--tls-key`).
    public var listener: (any TLSTermination)?
    /// Makes the certificates a forward proxy's intercepted hosts are answered with; nil makes every
    /// `CONNECT` tunnel blind.
    public var interception: (any TLSTermination)?
    /// TLS for the WebSocket tunnels Kakapo opens to `https://` upstreams (`KakapoTLS.UpstreamTLSClient`);
    /// without it, such an upgrade is answered 502.
    public var upstream: (any TLSOrigination)?

    public init(
        listener: (any TLSTermination)? = nil, interception: (any TLSTermination)? = nil,
        upstream: (any TLSOrigination)? = nil
    ) {
        self.listener = listener
        self.interception = interception
        self.upstream = upstream
    }
}
