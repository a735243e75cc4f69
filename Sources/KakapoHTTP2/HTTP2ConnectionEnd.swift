import NIOCore

/// The last handler of an HTTP/2 connection's pipeline: it takes what the HTTP/2 handlers pass on (frames of
/// the connection itself, events) and goes no further. The HTTP/1.1 handlers the connection started with
/// are still behind it for one tick of the event loop (NIO's decoder leaves asynchronously), and would
/// trap on an HTTP/2 frame.
final class HTTP2ConnectionEnd: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = Any

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {}

    func channelReadComplete(context: ChannelHandlerContext) {}

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {}

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // NIOHTTP2 has answered a protocol error with a GOAWAY already; the connection is of no further use.
        context.close(promise: nil)
    }
}
