import NIOCore

/// The first handler of an HTTP/2 connection's pipeline, before `NIOHTTP2Handler`: it notes whether NIOHTTP2
/// has written a GOAWAY with an error code (a connection error; `HTTP2ConnectionEnd` then ends the
/// connection), and once the connection has failed, what the client sends after is dropped unread.
///
/// The connection closes on the tick after its error, so that NIOHTTP2's GOAWAY goes out first; in between,
/// the rest of a read can still arrive. NIOHTTP2 would decode it from wherever its frame parser stopped (the
/// middle of an oversized frame's payload) and answer the garbage with a second GOAWAY, whose code (usually
/// PROTOCOL_ERROR) then hides the first one's from a client that keeps the last.
final class HTTP2InboundGate: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundIn = IOData

    private var isShut = false
    /// NIOHTTP2 wrote a GOAWAY whose error code is not NO_ERROR: it met a connection error. It writes the
    /// frame (one frame per write, its header first) before it reports the error.
    private(set) var sentErrorGoAway = false

    /// Drops everything read from now on.
    func shut() { isShut = true }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !isShut else { return }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if !sentErrorGoAway, case .byteBuffer(let buffer) = unwrapOutboundIn(data), Self.isErrorGoAway(buffer) {
            sentErrorGoAway = true
        }
        context.write(data, promise: promise)
    }

    /// Whether `buffer` starts with a GOAWAY frame (RFC 9113 6.8: type 7 on stream 0) whose error code is
    /// not 0.
    static func isErrorGoAway(_ buffer: ByteBuffer) -> Bool {
        // 9 bytes of frame header, then the last stream id (4) and the error code (4).
        guard buffer.readableBytes >= 17, let type = buffer.getInteger(at: buffer.readerIndex + 3, as: UInt8.self),
            type == 7, let code = buffer.getInteger(at: buffer.readerIndex + 13, as: UInt32.self)
        else { return false }
        return code != 0
    }
}
