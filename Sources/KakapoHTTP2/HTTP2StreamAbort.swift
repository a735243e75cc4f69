import NIOCore

#if canImport(NIOHTTP2)
    import NIOHTTP2

    /// Resets a stream whose answer is cut off midway (the upstream broke a live stream) with
    /// `INTERNAL_ERROR` instead of the `CANCEL` NIOHTTP2 sends for a closed stream channel: gRPC clients map
    /// `CANCEL` to CANCELLED, as if they had given up themselves, and `INTERNAL_ERROR` to INTERNAL. A close
    /// before the answer's head, or after its end, is left as it is.
    final class HTTP2StreamAbort: ChannelOutboundHandler, RemovableChannelHandler {
        typealias OutboundIn = HTTP2Frame.FramePayload
        typealias OutboundOut = HTTP2Frame.FramePayload

        private var answerStarted = false
        private var answerEnded = false

        func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
            switch unwrapOutboundIn(data) {
            case .headers(let headers):
                // A 100 Continue is no start of the answer: a close after it (the body never came) stays CANCEL.
                if headers.headers.first(name: ":status")?.hasPrefix("1") != true { answerStarted = true }
                if headers.endStream { answerEnded = true }
            case .data(let data):
                if data.endStream { answerEnded = true }
            default:
                break
            }
            context.write(data, promise: promise)
        }

        func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
            if answerStarted && !answerEnded && mode == .all {
                answerEnded = true
                context.writeAndFlush(wrapOutboundOut(.rstStream(.internalError)), promise: nil)
            }
            context.close(mode: mode, promise: promise)
        }
    }
#endif
