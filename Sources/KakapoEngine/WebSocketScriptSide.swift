import KakapoHTTP
import KakapoStubs
import Logging

/// The server side of a route's scripted WebSocket conversation, for one connection: the script's opening
/// steps once the `101` is out, then for each client message the steps of the first rule that takes it.
/// A message no rule takes is ignored (logged at debug level); once the script has closed, nothing more
/// is answered, since nothing may follow a close frame.
package final class WebSocketScriptSide: WebSocketServerSide {
    private let script: WebSocketScriptAnswer
    private let logger: Logger
    /// Set once a close is among the actions given.
    private var closed = false

    package init(_ script: WebSocketScriptAnswer, logger: Logger) {
        self.script = script
        self.logger = logger
    }

    package func opened() -> [WebSocketAction] {
        actions(script.opened())
    }

    package func received(_ message: WebSocketMessage.Payload) -> [WebSocketAction] {
        guard !closed else { return [] }
        guard let (_, steps) = script.received(message) else {
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
