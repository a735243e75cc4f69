/// One message of a WebSocket conversation, whole: fragments joined and, when permessage-deflate was
/// negotiated, decompressed. Pings and pongs are not messages; a close is a `WebSocketClose`.
public struct WebSocketMessage: Hashable, Sendable {
    /// Which side sent a message or a close.
    public enum Sender: String, Hashable, Sendable {
        case client
        case server
    }

    /// A message's content: a text message (valid UTF-8) or a binary one.
    public enum Payload: Hashable, Sendable {
        case text(String)
        case binary([UInt8])

        /// The bytes on the wire (a text message's UTF-8).
        public var bytes: [UInt8] {
            switch self {
            case .text(let text): Array(text.utf8)
            case .binary(let bytes): bytes
            }
        }

        /// True for a text message.
        public var isText: Bool {
            if case .text = self { return true }
            return false
        }
    }

    public var from: Sender
    /// When the message was sent, in milliseconds after the handshake completed (the `101`).
    public var offsetMilliseconds: Double
    public var payload: Payload

    public init(from: Sender, offsetMilliseconds: Double, payload: Payload) {
        self.from = from
        self.offsetMilliseconds = offsetMilliseconds
        self.payload = payload
    }
}
