import KakapoEngine
import KakapoHTTP
import NIOCore
import NIOHTTP1

/// Answers a WebSocket upgrade itself and plays a `WebSocketPlay` (issue 31): SCAFFOLDING, to be written.
enum WebSocketServing {
    static func start(
        _ play: WebSocketPlay, for head: HTTPRequestHead, request: HTTP.Request, settings: HTTPConnectionSettings,
        errors: ErrorWriter, context: ChannelHandlerContext
    ) {
        errors.write(
            "WebSocket replay is not written yet", status: .notImplemented, version: head.version,
            headOnly: false, context: context)
    }
}
