import NIOCore

/// Encrypts connections Kakapo opens to a TLS upstream itself (WebSocket tunnels to `https://` upstreams;
/// libcurl does its own TLS for HTTP). `KakapoTLS` provides the implementation (`UpstreamTLSClient`), so
/// this module needs no TLS library.
public protocol TLSOrigination: Sendable {
    /// Starts TLS to `host` (a name, sent as SNI and checked against the certificate, or an IP address,
    /// checked against the certificate's addresses) on `channel`, just connected; called on its event
    /// loop. The future succeeds once the handshake is done, and fails with the reason otherwise (an
    /// untrusted certificate, another host's name).
    func secure(_ channel: any Channel, host: String) -> EventLoopFuture<Void>
}
