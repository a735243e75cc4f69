import NIOCore

/// Decrypts client connections: hands out a TLS server handler for a host name. `KakapoTLS` provides
/// the implementations (certificates from Kakapo's CA, or from files), so this module needs no TLS
/// library.
public protocol TLSTermination: Sendable {
    /// A new handler that terminates TLS for `host` (a name or an IP address), put first in the
    /// connection's channel pipeline. Called on the connection's event loop.
    func makeServerHandler(forHost host: String) throws -> any ChannelHandler

    /// What an error that reached the end of a decrypted connection's pipeline means, for the log: an
    /// ordinary close, a client that does not trust the certificate, or another failure.
    func closeReason(for error: any Error) -> TLSCloseReason
}

extension TLSTermination {
    /// Without a TLS library to ask, every error is a failure, told as it describes itself.
    public func closeReason(for error: any Error) -> TLSCloseReason {
        .failed("\(error)")
    }
}
