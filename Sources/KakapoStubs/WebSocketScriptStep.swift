import KakapoHTTP

/// One thing a route's WebSocket script does for a connection, with its time counted from the event it
/// answers (the opening, or the client's message): the engine turns these into `WebSocketAction`s.
package enum WebSocketScriptStep: Hashable, Sendable {
    /// Sends a message `after` the given time (never before a step given earlier).
    case send(WebSocketMessage.Payload, after: Duration)
    /// Closes the conversation with `code` and `reason` `after` the given time; nothing is sent after it.
    case close(code: Int, reason: String, after: Duration)
    /// The event's messages would be longer than `limit` bytes in all (a template repeating a long client
    /// message): none of them is sent, and the conversation ends with 1011 (internal error) saying so.
    case tooLarge(limit: Int)
}
