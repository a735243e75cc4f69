import NIOCore

/// Decrypts client connections: hands out a TLS server handler for a host name. `KakapoTLS` provides
/// the implementations (certificates from Kakapo's CA, or from files), so this module needs no TLS
/// library.
public protocol TLSTermination: Sendable {
    /// A new handler that terminates TLS for `host` (a name or an IP address), put first in the
    /// connection's channel pipeline. Called on the connection's event loop.
    func makeServerHandler(forHost host: String) throws -> any ChannelHandler
}
