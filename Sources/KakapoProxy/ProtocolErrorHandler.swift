import KakapoHTTP
import KakapoJSON
import NIOCore
import NIOHTTP1

/// Answers requests NIO's parser rejects before closing the connection: 431 when the header section is
/// too large, 400 with the parser's reason otherwise. (NIO's own handler answers a bare 400 to both.)
final class ProtocolErrorHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    private var responding = false

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard let parserError = error as? HTTPParserError else {
            context.fireErrorCaught(error)
            return
        }
        // A response can only be sent if none has started; the decoder closes the channel right after.
        if !responding {
            let tooLarge = parserError == .headerOverflow
            let message =
                tooLarge
                ? "the request's header section is larger than the server accepts"
                : "malformed HTTP request: \(parserError)"
            let body = JSONWriter().write(["error": .string(message)])
            let headers = NIOHTTP1.HTTPHeaders([
                ("Content-Type", "application/json"), ("Content-Length", String(body.count)), ("Connection", "close"),
                ("X-Kakapo-Source", ResponseSource.error.rawValue),
            ])
            let status: HTTPResponseStatus = tooLarge ? .requestHeaderFieldsTooLarge : .badRequest
            context.write(
                wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: status, headers: headers))),
                promise: nil)
            context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(bytes: body)))), promise: nil)
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        }
        context.fireErrorCaught(error)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(let head) where head.status.code >= 200: responding = true
        case .end: responding = false
        default: break
        }
        context.write(data, promise: promise)
    }
}
