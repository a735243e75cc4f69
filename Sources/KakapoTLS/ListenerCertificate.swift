import Foundation
import KakapoProxy
import NIOCore
import NIOSSL

/// The certificate the listening port answers TLS with (reverse-proxy mode): one read from files
/// (`--tls-cert`, `--tls-key`), or one Kakapo's CA makes for `localhost`, `127.0.0.1` and `::1` (`--tls`).
public struct ListenerCertificate: TLSTermination {
    private let context: NIOSSLContext

    /// A certificate chain and its key, both PEM files; errors name the file. ALPN offers
    /// `applicationProtocols` (`["h2", "http/1.1"]` when the server speaks HTTP/2).
    public init(certificatePath: String, keyPath: String, applicationProtocols: [String] = ["http/1.1"])
        throws(TLSSetupError)
    {
        let chain: [NIOSSLCertificate]
        do {
            chain = try NIOSSLCertificate.fromPEMFile(certificatePath)
        } catch {
            throw TLSSetupError("cannot read the certificate \(certificatePath): \(error)")
        }
        guard !chain.isEmpty else { throw TLSSetupError("\(certificatePath) holds no PEM certificate") }
        let key: NIOSSLPrivateKey
        do {
            key = try NIOSSLPrivateKey(file: keyPath, format: .pem)
        } catch {
            throw TLSSetupError("cannot read the private key \(keyPath): \(error)")
        }
        var configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(key))
        configuration.applicationProtocols = applicationProtocols
        do {
            context = try NIOSSLContext(configuration: configuration)
        } catch {
            throw TLSSetupError(
                "the key \(keyPath) and the certificate \(certificatePath) cannot be used together: \(error)")
        }
    }

    /// A certificate from Kakapo's CA for the loopback names.
    public init(authority: CertificateAuthority, applicationProtocols: [String] = ["http/1.1"]) throws(TLSSetupError) {
        context = try authority.serverContext(
            for: ["localhost", "127.0.0.1", "::1"], applicationProtocols: applicationProtocols)
    }

    public func makeServerHandler(forHost host: String) throws -> any ChannelHandler {
        NIOSSLServerHandler(context: context)
    }

    public func closeReason(for error: any Error) -> TLSCloseReason {
        TLSCloseClassifier.reason(for: error)
    }
}
