import NIOCore

#if canImport(NIOHTTP2)
    import NIOHTTP2
#endif

/// The last handler of an HTTP/2 connection's pipeline: it takes what the HTTP/2 handlers pass on (frames of
/// the connection itself, events) and goes no further. The HTTP/1.1 handlers the connection started with
/// are still behind it for one tick of the event loop (NIO's decoder leaves asynchronously), and would
/// trap on an HTTP/2 frame.
final class HTTP2ConnectionEnd: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = Any

    /// The connection's first handler: it tells a connection error (NIOHTTP2's GOAWAY with an error code went
    /// out) from a stream error, and is shut on the former so that nothing read after it reaches NIOHTTP2.
    private let gate: HTTP2InboundGate

    init(gate: HTTP2InboundGate) {
        self.gate = gate
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {}

    func channelReadComplete(context: ChannelHandlerContext) {}

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {}

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // A stream error (RFC 9113 5.4.2) ends that stream alone: NIOHTTP2 has reset it (RST_STREAM) and
        // reports the error here, and the connection's other streams go on. A connection error comes after
        // NIOHTTP2's GOAWAY with its code (`HTTP2InboundGate` sees it written); an error that is not NIOHTTP2's
        // (the socket's, TLS's) ends the connection too.
        #if canImport(NIOHTTP2)
            guard gate.sentErrorGoAway || !(error is any NIOHTTP2Error) else { return }
        #endif
        // The connection is of no further use. It is closed on the next tick, not now: NIOHTTP2 may report an
        // error while it is still flushing that GOAWAY (a SETTINGS ACK it had buffered fails once the GOAWAY is
        // out), and closing then would drop it, so the client would see the connection cut without a reason
        // (DATA on an idle stream, sent with the preface, did). Until then, what else arrives is dropped.
        gate.shut()
        let channel = context.channel
        context.eventLoop.execute {
            channel.flush()
            channel.close(promise: nil)
        }
    }
}
