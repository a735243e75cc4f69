import KakapoHTTP

/// The server side of a WebSocket conversation Kakapo plays (`WebSocketPlay`): the transport tells it
/// what happens, one call at a time on one thread, and does the actions it returns, in order. It knows
/// no wire: timers, frames and the close handshake are the transport's.
public protocol WebSocketServerSide: AnyObject {
    /// The `101` is out: what to do first (a recording's opening server messages, a script's `send`).
    func opened() -> [WebSocketAction]
    /// A whole message from the client (fragments joined).
    func received(_ message: WebSocketMessage.Payload) -> [WebSocketAction]
}

/// What the transport does for a `WebSocketServerSide`, in the order given.
public enum WebSocketAction: Sendable, Equatable {
    /// Sends a message `after` the time from now (never before an action given earlier).
    case send(WebSocketMessage.Payload, after: Duration)
    /// Sends a close frame with `code` (nil: none) and `reason` `after` the time from now (never before an
    /// action given earlier), then ends the connection once the client answers it.
    case close(code: Int?, reason: String, after: Duration)
    /// The client sent a message the conversation did not expect: the transport logs `description` and
    /// journals a miss (the close that follows is its own action).
    case miss(String)
}
