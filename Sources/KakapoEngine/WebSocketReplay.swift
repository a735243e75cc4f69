import KakapoCassette
import KakapoHTTP

/// Plays a recorded WebSocket conversation (issue 31): SCAFFOLDING, to be written.
enum WebSocketReplay {
    static func play(
        _ conversation: WebSocketConversation, recorded: HTTP.Request, for request: HTTP.Request,
        in pipeline: RequestPipeline
    ) -> WebSocketPlay {
        WebSocketPlay(subprotocol: nil, description: "recorded conversation of \(request.method) \(request.path)") {
            Silent()
        }
    }

    final class Silent: WebSocketServerSide {
        func opened() -> [WebSocketAction] { [] }
        func received(_ message: WebSocketMessage.Payload) -> [WebSocketAction] { [] }
    }
}
