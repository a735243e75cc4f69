import NIOCore

#if canImport(NIOHTTP2)
    import NIOHTTP2

    /// Chooses the error code of the RST_STREAM a closed stream channel sends, where NIOHTTP2 would always
    /// send `CANCEL`:
    /// - an answer cut off midway (the upstream broke a live stream) is reset with `INTERNAL_ERROR`: gRPC
    ///   clients map `CANCEL` to CANCELLED, as if they had given up themselves, and `INTERNAL_ERROR` to
    ///   INTERNAL;
    /// - a whole answer sent before the request ended (a gRPC call refused while its client keeps the request
    ///   open, an upload refused midway) is followed by `NO_ERROR`, which RFC 9113 8.1 names for asking the
    ///   client to stop sending "without error": a `CANCEL` right behind the answer's trailers made grpcio
    ///   report CANCELLED instead of the status the trailers carried.
    ///
    /// A close before the answer's head, or after both sides ended, is left as it is.
    final class HTTP2StreamAbort: ChannelDuplexHandler, RemovableChannelHandler {
        typealias InboundIn = HTTP2Frame.FramePayload
        typealias InboundOut = HTTP2Frame.FramePayload
        typealias OutboundIn = HTTP2Frame.FramePayload
        typealias OutboundOut = HTTP2Frame.FramePayload

        private var answerStarted = false
        private var answerEnded = false
        private var requestEnded = false
        /// A reset has been written by this handler: NIOHTTP2's own is not sent after it.
        private var reset = false

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .headers(let headers) where headers.endStream: requestEnded = true
            case .data(let data) where data.endStream: requestEnded = true
            default: break
            }
            context.fireChannelRead(data)
        }

        func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
            switch unwrapOutboundIn(data) {
            case .headers(let headers):
                // A 100 Continue is no start of the answer: a close after it (the body never came) stays CANCEL.
                if headers.headers.first(name: ":status")?.hasPrefix("1") != true { answerStarted = true }
                if headers.endStream { answerEnded = true }
            case .data(let data):
                if data.endStream { answerEnded = true }
            case .rstStream:
                if reset {
                    // NIOHTTP2's CANCEL after the reset written here: the stream is already reset.
                    promise?.succeed()
                    return
                }
            default:
                break
            }
            context.write(data, promise: promise)
        }

        func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
            if mode == .all && answerStarted && !reset && !(answerEnded && requestEnded) {
                reset = true
                let code: HTTP2ErrorCode = answerEnded ? .noError : .internalError
                answerEnded = true
                context.writeAndFlush(wrapOutboundOut(.rstStream(code)), promise: nil)
            }
            context.close(mode: mode, promise: promise)
        }
    }
#endif
