/// How a WebSocket conversation ended: which side sent the close frame first, its status code (nil when
/// the frame carried none) and reason, and when (milliseconds after the handshake; nil when not known).
public struct WebSocketClose: Hashable, Sendable {
    public var from: WebSocketMessage.Sender
    /// The close status code, 1000 to 4999 (RFC 6455 7.4); nil for a close frame without one.
    public var code: Int?
    public var reason: String
    public var offsetMilliseconds: Double?

    public init(from: WebSocketMessage.Sender, code: Int?, reason: String = "", offsetMilliseconds: Double? = nil) {
        self.from = from
        self.code = code
        self.reason = reason
        self.offsetMilliseconds = offsetMilliseconds
    }

    /// The codes a close frame may carry (RFC 6455 7.4): 1000 to 4999. Whether a given one is allowed on the
    /// wire (1005, 1006 and 1015 never are) is `isSendable(_:)`.
    public static let codes: ClosedRange<Int> = 1000...4999

    /// Whether `code` may be sent in a close frame: in `codes`, and not 1004, 1005, 1006 or 1015, which
    /// RFC 6455 reserves.
    public static func isSendable(_ code: Int) -> Bool {
        codes.contains(code) && ![1004, 1005, 1006, 1015].contains(code)
    }
}
