import KakapoHTTP

/// A WebSocket conversation recorded with its upgrade: the subprotocol the upstream chose, every message
/// both ways in the order they were sent (with their offsets after the `101`), and how it ended. A cassette
/// stores it as the upgrade interaction's `"websocket"` (cassettes/README.md).
public struct WebSocketConversation: Hashable, Sendable {
    /// The subprotocol the upstream chose (`Sec-WebSocket-Protocol` of its `101`); nil for none.
    public var subprotocol: String?
    /// Every message both ways, in the order they were sent.
    public var messages: [WebSocketMessage]
    /// The close that ended it; nil when the recording ended without one (the connection dropped, or
    /// Kakapo stopped): its replay then stays open, silent, after the last message.
    public var close: WebSocketClose?

    /// A conversation with these parts; empty by default, for a reader or a recorder to fill.
    public init(subprotocol: String? = nil, messages: [WebSocketMessage] = [], close: WebSocketClose? = nil) {
        self.subprotocol = subprotocol
        self.messages = messages
        self.close = close
    }

    /// How many messages each side sent.
    public var counts: (client: Int, server: Int) {
        let client = messages.count { $0.from == .client }
        return (client, messages.count - client)
    }

    /// From the handshake to the close (or the last message), in milliseconds.
    public var durationMilliseconds: Double {
        max(close?.offsetMilliseconds ?? 0, messages.last?.offsetMilliseconds ?? 0)
    }
}
