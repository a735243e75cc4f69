import NIOCore

/// The first handler of an intercepted `CONNECT` tunnel: it looks at the client's first bytes and sets the
/// tunnel up for what they are. A TLS handshake record (content type 22) gets Kakapo's TLS termination and
/// HTTP handlers for `https://host:port`; anything else is plaintext HTTP through the tunnel (a `ws://`
/// WebSocket, or `http://` that a client tunnels anyway) and gets HTTP handlers for `http://host:port`.
/// Then it steps aside and hands the bytes on.
final class ConnectTunnelSniffer: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer

    /// The first byte of a TLS record carrying a handshake (RFC 8446 5.1).
    static let tlsHandshakeRecord: UInt8 = 22

    private let configure: (_ tls: Bool, _ operations: ChannelPipeline.SynchronousOperations) throws -> Void
    private var done = false

    /// `configure` adds, after this handler, what the tunnel needs: TLS and HTTP for a TLS client (`tls`
    /// true), HTTP alone for a plaintext one. It runs once, on the event loop.
    init(configure: @escaping (_ tls: Bool, _ operations: ChannelPipeline.SynchronousOperations) throws -> Void) {
        self.configure = configure
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !done else {
            context.fireChannelRead(data)
            return
        }
        let bytes = unwrapInboundIn(data)
        guard let first = bytes.getInteger(at: bytes.readerIndex, as: UInt8.self) else { return }
        done = true
        do {
            try configure(first == Self.tlsHandshakeRecord, context.pipeline.syncOperations)
        } catch {
            context.close(promise: nil)
            return
        }
        // The handlers just added sit after this one: they get these bytes, then everything that follows.
        context.fireChannelRead(data)
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        // A tunnel whose client says nothing at all is held to the idle timeout like any connection.
        if !done, event is ConnectionTimeoutHandler.Idle {
            context.close(promise: nil)
            return
        }
        context.fireUserInboundEventTriggered(event)
    }
}
