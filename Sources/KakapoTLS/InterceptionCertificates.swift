import KakapoProxy
import NIOCore
import NIOSSL

/// Terminates TLS for intercepted hosts with certificates Kakapo's CA makes on demand (one per host,
/// cached for the life of the process).
public struct InterceptionCertificates: TLSTermination {
    public let authority: CertificateAuthority

    public init(authority: CertificateAuthority) { self.authority = authority }

    public func makeServerHandler(forHost host: String) throws -> any ChannelHandler {
        NIOSSLServerHandler(context: try authority.serverContext(for: [host]))
    }
}
