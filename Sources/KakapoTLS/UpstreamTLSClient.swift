import KakapoProxy
import KakapoUpstream
import NIOCore
import NIOSSL
import NIOTLS

/// TLS to an upstream for the connections Kakapo opens itself (WebSocket tunnels to `https://`
/// upstreams), trusting what libcurl trusts for the same upstream: the system's CAs plus
/// `--upstream-ca`, or nothing checked with `--insecure`.
public struct UpstreamTLSClient: TLSOrigination {
    private let context: NIOSSLContext

    /// The client side for `configuration`'s trust settings; errors name the CA file.
    public init(_ configuration: UpstreamConfiguration) throws(TLSSetupError) {
        var tls = TLSConfiguration.makeClientConfiguration()
        // A WebSocket upgrade is an HTTP/1.1 request.
        tls.applicationProtocols = ["http/1.1"]
        if configuration.insecure {
            tls.certificateVerification = .none
        } else if CABundle.lacksTrust(configuration) {
            // NIOSSL would only say "unknownError([])": name what is missing and how to provide it.
            throw TLSSetupError(CABundle.missingMessage(for: configuration.baseURL))
        } else if CABundle.systemBundlePath == nil {
            // No system bundle to add to (a forward proxy's upstreams, or `--upstream-ca` alone): trust only
            // the file, or nothing, so that handshakes fail with a certificate error rather than start-up.
            tls.trustRoots = .certificates([])
            if let file = configuration.additionalCAFile { tls.trustRoots = .file(file) }
        } else if let file = configuration.additionalCAFile {
            tls.additionalTrustRoots = [.file(file)]
        }
        do {
            context = try NIOSSLContext(configuration: tls)
        } catch {
            throw TLSSetupError(
                "cannot set up TLS to the upstream\(configuration.additionalCAFile.map { " with \($0)" } ?? ""): \(error)"
            )
        }
    }

    public func secure(_ channel: any Channel, host: String) -> EventLoopFuture<Void> {
        let promise = channel.eventLoop.makePromise(of: Void.self)
        do {
            // An IP address is not sent as SNI; NIOSSL then checks the certificate against the address.
            let isAddress = host.contains(":") || host.split(separator: ".").allSatisfy { UInt8($0) != nil }
            let operations = channel.pipeline.syncOperations
            try operations.addHandler(NIOSSLClientHandler(context: context, serverHostname: isAddress ? nil : host))
            try operations.addHandler(HandshakeWatcher(promise: promise))
        } catch {
            promise.fail(error)
        }
        return promise.futureResult
    }
}

/// Completes a promise when the TLS handshake is done (then leaves the pipeline), or fails it with the
/// first error or the connection's end.
private final class HandshakeWatcher: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny
    private var promise: EventLoopPromise<Void>?

    init(promise: EventLoopPromise<Void>) { self.promise = promise }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case .handshakeCompleted = event as? TLSUserEvent {
            promise?.succeed()
            promise = nil
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        promise?.fail(error)
        promise = nil
        context.fireErrorCaught(error)
    }

    func channelInactive(context: ChannelHandlerContext) {
        promise?.fail(ChannelError.eof)
        promise = nil
        context.fireChannelInactive()
    }
}
