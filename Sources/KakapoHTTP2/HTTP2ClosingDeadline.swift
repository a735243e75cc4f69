import NIOCore

#if canImport(NIOHTTP2)
    import NIOHTTP2

    /// Closes an HTTP/2 connection the grace period after its first GOAWAY, whatever the client does.
    ///
    /// `NIOHTTP2ServerConnectionManagementHandler` closes gracefully: a GOAWAY and a PING, then, once the
    /// client acknowledges the PING, a second GOAWAY and the grace period for the streams left. A client
    /// that never acknowledges it would hold the connection for ever. Sits between `NIOHTTP2Handler` and
    /// the management handler, and sees the frames the latter writes.
    final class HTTP2ClosingDeadline: ChannelOutboundHandler, RemovableChannelHandler {
        typealias OutboundIn = HTTP2Frame
        typealias OutboundOut = HTTP2Frame

        /// How long streams may take to finish once the connection said it is going away.
        private let gracePeriod: TimeAmount
        private var deadline: Scheduled<Void>?

        init(gracePeriod: TimeAmount) {
            self.gracePeriod = gracePeriod
        }

        func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
            if deadline == nil, case .goAway = unwrapOutboundIn(data).payload {
                let channel = context.channel
                deadline = context.eventLoop.scheduleTask(in: gracePeriod) { channel.close(promise: nil) }
            }
            context.write(data, promise: promise)
        }

        func handlerRemoved(context: ChannelHandlerContext) {
            deadline?.cancel()
            deadline = nil
        }
    }
#endif
