import NIOCore

#if canImport(NIOHTTP2)
    import NIOHTTP2

    /// Completes a request's pseudo-header fields where HTTP/2 lets a request go without ones NIOHTTP2's
    /// HTTP/1 translation requires of every request (it fails the stream otherwise, and the client saw a
    /// bare reset): a `CONNECT` carries `:authority` alone (RFC 9113 8.5), and gets the `:path` and `:scheme`
    /// an HTTP/1.1 `CONNECT` would have, so Kakapo answers it `405` with its reason; a request that sends
    /// `Host` instead of `:authority` (RFC 9113 8.3.1) gets `:authority` from it. Anything else malformed
    /// still fails translation, and `HTTPServerHandler` answers it `400`. Only the stream's first HEADERS
    /// (the request head) is looked at; trailers pass as they are.
    final class HTTP2RequestPseudoHeaders: ChannelInboundHandler, RemovableChannelHandler {
        typealias InboundIn = HTTP2Frame.FramePayload
        typealias InboundOut = HTTP2Frame.FramePayload

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            guard case .headers(var content) = unwrapInboundIn(data) else {
                context.fireChannelRead(data)
                return
            }
            // The request head: what follows is the body and trailers, which need nothing from here.
            defer { context.pipeline.syncOperations.removeHandler(context: context, promise: nil) }
            let headers = content.headers
            let hasAuthority = headers.contains(name: ":authority")
            if headers.first(name: ":method") == "CONNECT", !headers.contains(name: ":path") {
                content.headers.add(name: ":path", value: headers.first(name: ":authority") ?? "")
                content.headers.add(name: ":scheme", value: "https")
            } else if !hasAuthority, let host = headers.first(name: "host") {
                content.headers.add(name: ":authority", value: host)
            } else {
                context.fireChannelRead(data)
                return
            }
            context.fireChannelRead(wrapInboundOut(.headers(content)))
        }
    }
#endif
