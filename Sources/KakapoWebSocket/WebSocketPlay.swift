import KakapoHTTP

/// A WebSocket conversation Kakapo plays itself: the subprotocol its `101` names and, for each
/// connection, a fresh `WebSocketServerSide` that decides what to send.
public struct WebSocketPlay: Sendable {
    /// The `Sec-WebSocket-Protocol` of the `101` (one the client offered); nil for none.
    public var subprotocol: String?
    /// What the log says is playing (`recorded conversation of GET /chat`, `route chat-echo`).
    public var description: String
    /// The server side of one connection; called once per upgrade.
    public let makeSide: @Sendable () -> any WebSocketServerSide
    /// Told of each miss besides the journal (a cassette session's summary keeps its own); nil for none.
    public var onMiss: (@Sendable (_ description: String) -> Void)?

    /// A play whose `101` names `subprotocol`, described as `description`, with `makeSide` making each
    /// connection's side.
    public init(
        subprotocol: String?, description: String, makeSide: @escaping @Sendable () -> any WebSocketServerSide
    ) {
        self.subprotocol = subprotocol
        self.description = description
        self.makeSide = makeSide
    }
}
