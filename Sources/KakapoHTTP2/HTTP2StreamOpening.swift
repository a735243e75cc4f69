import NIOCore

/// The first handler of every HTTP/2 stream: what the stream reads waits for the event loop's next tick
/// after the stream was set up, then passes on, and the handler leaves.
///
/// NIOHTTP2 reads a new stream's first HEADERS to the stream's handlers before it tells the connection's
/// handlers (`NIOHTTP2ServerConnectionManagementHandler`) that the stream exists. An answer written and
/// the stream closed within that read (any refusal: `CONNECT`'s 405, a request with no `:authority`, a
/// body declared too large) reached them as the close of a stream that was never opened: an assertion
/// that stopped a debug build, and in a release build a stream counted open for ever, so the connection
/// was never closed for idleness. One tick later the stream is known everywhere, whatever answers it.
final class HTTP2StreamOpening: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = Any

    /// Reads that came before the stream was known everywhere, in order.
    private var held: [NIOAny] = []
    private var readCompleteHeld = false
    /// Whether reads pass straight on (the tick has passed, or the stream is gone).
    private var passing = false

    func handlerAdded(context: ChannelHandlerContext) {
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        context.eventLoop.execute {
            let (handler, context) = bound.value
            handler.release(context: context)
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if passing {
            context.fireChannelRead(data)
        } else {
            // At most what one read of the connection carried for this stream (its flow-control window).
            held.append(data)
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if passing {
            context.fireChannelReadComplete()
        } else {
            readCompleteHeld = true
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        // Reset by the client before its request was passed on: nobody waits for an answer.
        passing = true
        held = []
        readCompleteHeld = false
        context.fireChannelInactive()
    }

    private func release(context: ChannelHandlerContext) {
        guard !passing else { return }
        passing = true
        let reads = held
        held = []
        for read in reads { context.fireChannelRead(read) }
        if readCompleteHeld {
            readCompleteHeld = false
            context.fireChannelReadComplete()
        }
        // From now on a read costs no hop through this handler.
        if context.channel.isActive {
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
        }
    }
}
