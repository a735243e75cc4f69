import NIOCore

/// The first handler of an HTTP/2 connection's pipeline, before `NIOHTTP2Handler`: once the connection has
/// failed (`HTTP2ConnectionEnd` shuts it), what the client sends after is dropped unread.
///
/// The connection closes on the tick after its error, so that NIOHTTP2's GOAWAY goes out first; in between,
/// the rest of a read can still arrive. NIOHTTP2 would decode it from wherever its frame parser stopped (the
/// middle of an oversized frame's payload) and answer the garbage with a second GOAWAY, whose code (usually
/// PROTOCOL_ERROR) then hides the first one's from a client that keeps the last.
final class HTTP2InboundGate: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer

    private var isShut = false

    /// Drops everything read from now on.
    func shut() { isShut = true }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !isShut else { return }
        context.fireChannelRead(data)
    }
}
