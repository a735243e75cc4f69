import NIOCore

/// Closes a connection whose request is not fully received within a deadline of its first byte, so a
/// client that dribbles a byte at a time (slowloris) cannot hold a connection. Sits before the HTTP
/// decoder; `HTTPServerHandler` tells it when a whole request has arrived.
final class RequestDeadlineHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    private let deadline: TimeAmount
    private var timer: Scheduled<Void>?
    private var context: ChannelHandlerContext?

    init(deadline: TimeAmount) { self.deadline = deadline }

    func handlerAdded(context: ChannelHandlerContext) { self.context = context }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
        self.context = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if timer == nil {
            let channel = context.channel
            timer = context.eventLoop.scheduleTask(in: deadline) { channel.close(promise: nil) }
        }
        context.fireChannelRead(data)
    }

    /// A whole request has been read: the next byte starts a new deadline.
    func requestReceived() {
        timer?.cancel()
        timer = nil
    }

    func channelInactive(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
        context.fireChannelInactive()
    }
}
