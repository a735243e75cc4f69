import KakapoHTTP
import KakapoStubs
import KakapoWebSocket
import Logging

/// The server side of a route's scripted WebSocket conversation, for one connection: the script's opening
/// steps once the `101` is out, then for each client message the steps of the first rule that takes it.
/// A message no rule takes is ignored (logged at debug level); once the script has closed, nothing more
/// is answered, since nothing may follow a close frame. The messages of one event are at most the largest
/// message Kakapo takes from a client (`--max-body-size`): past it, the conversation closes 1011.
package final class WebSocketScriptSide: WebSocketServerSide {
    private let script: WebSocketScriptAnswer
    private let logger: Logger
    /// The most bytes the messages of one event may render to in all.
    private let maximumMessageBytes: Int
    /// Set once a close is among the actions given.
    private var closed = false

    /// The side for one connection of `script`; `maximumMessageBytes` bounds what one event sends.
    package init(_ script: WebSocketScriptAnswer, logger: Logger, maximumMessageBytes: Int) {
        self.script = script
        self.logger = logger
        self.maximumMessageBytes = maximumMessageBytes
    }

    /// The script's opening: its messages and perhaps its close.
    package func opened() -> [WebSocketAction] {
        actions(script.opened(limit: maximumMessageBytes))
    }

    /// The steps of the first rule that takes `message`; nothing when none does or the script has closed.
    package func received(_ message: WebSocketMessage.Payload) -> [WebSocketAction] {
        guard !closed else { return [] }
        guard let (_, steps) = script.received(message, limit: maximumMessageBytes) else {
            logger.debug(
                "route \(script.route): no websocket rule takes the client's \(Self.describe(message)): ignored")
            return []
        }
        return actions(steps)
    }

    private func actions(_ steps: [WebSocketScriptStep]) -> [WebSocketAction] {
        guard !closed else { return [] }
        return steps.map { step in
            switch step {
            case .send(let payload, let after):
                return .send(payload, after: after)
            case .close(let code, let reason, let after):
                closed = true
                return .close(code: code, reason: reason, after: after)
            case .tooLarge(let limit):
                closed = true
                logger.warning(
                    "route \(script.route): the messages a websocket rule sends would be larger than \(limit) bytes in all (a template repeating the client's message?): none sent, closed 1011"
                )
                return .close(code: 1011, reason: "the route's reply would be larger than \(limit) bytes", after: .zero)
            }
        }
    }

    /// `text message "hello"` (its first 100 characters) or `binary message of 3 bytes`, for the log.
    static func describe(_ message: WebSocketMessage.Payload) -> String {
        switch message {
        case .text(let text):
            // The first 100 characters, without counting the rest of a long message.
            let head = text.prefix(100)
            return "text message \"\(head)\(head.endIndex < text.endIndex ? "…" : "")\""
        case .binary(let bytes):
            return "binary message of \(bytes.count) bytes"
        }
    }
}
