import NIOCore

#if canImport(NIOHTTP2)
    import NIOHTTP2

    /// Resets an HTTP/2 stream whose answer has made no progress for the idle timeout: a client that grants
    /// no flow-control window (SETTINGS_INITIAL_WINDOW_SIZE 0 and no WINDOW_UPDATE) or does not read the
    /// socket would otherwise hold the stream, its buffered answer and its connection for ever (the stream's
    /// idle timeout spares a stream whose answer is on its way, and this answer never arrives).
    ///
    /// Progress is a write of the stream's reaching the socket, or a WINDOW_UPDATE for the stream: a slow
    /// reader of a large answer grants window as it reads. An answer still waiting for the upstream has no
    /// write outstanding, so it is not timed here. Sits before the HTTP/1 translation, which drops
    /// WINDOW_UPDATE frames. Closing the stream channel sends RST_STREAM (CANCEL).
    final class HTTP2StreamStall: ChannelDuplexHandler, RemovableChannelHandler {
        typealias InboundIn = HTTP2Frame.FramePayload
        typealias InboundOut = HTTP2Frame.FramePayload
        typealias OutboundIn = HTTP2Frame.FramePayload
        typealias OutboundOut = HTTP2Frame.FramePayload

        /// How long a stream may make no progress while a write is outstanding.
        private let limit: TimeAmount
        /// Writes handed on whose promise has not completed.
        private var outstanding = 0
        private var lastProgress = NIODeadline.now()
        private var timer: Scheduled<Void>?
        private var context: ChannelHandlerContext?

        init(limit: TimeAmount) {
            self.limit = limit
        }

        func handlerAdded(context: ChannelHandlerContext) {
            self.context = context
        }

        func handlerRemoved(context: ChannelHandlerContext) {
            timer?.cancel()
            timer = nil
            self.context = nil
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            if case .windowUpdate = unwrapInboundIn(data) { lastProgress = .now() }
            context.fireChannelRead(data)
        }

        func channelInactive(context: ChannelHandlerContext) {
            timer?.cancel()
            timer = nil
            context.fireChannelInactive()
        }

        func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
            let promise = promise ?? context.eventLoop.makePromise()
            if outstanding == 0 { lastProgress = .now() }
            outstanding += 1
            let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
            promise.futureResult.whenComplete { _ in bound.value.written() }
            if timer == nil { schedule(at: lastProgress + limit, context: context) }
            context.write(data, promise: promise)
        }

        private func written() {
            outstanding -= 1
            lastProgress = .now()
        }

        private func schedule(at deadline: NIODeadline, context: ChannelHandlerContext) {
            let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
            timer = context.eventLoop.scheduleTask(deadline: deadline) { bound.value.check() }
        }

        private func check() {
            timer = nil
            guard let context, outstanding > 0 else { return }
            let due = lastProgress + limit
            if NIODeadline.now() >= due {
                context.close(promise: nil)
            } else {
                schedule(at: due, context: context)
            }
        }
    }
#endif
