/// How a WebSocket conversation ended: which side sent the close frame first, its status code (nil when
/// the frame carried none) and reason, and when (milliseconds after the handshake; nil when not known).
public struct WebSocketClose: Hashable, Sendable {
    /// The side that sent the close frame first.
    public var from: WebSocketMessage.Sender
    /// The close status code, 1000 to 4999 (RFC 6455 7.4); nil for a close frame without one.
    public var code: Int?
    /// Why, as the frame said it (valid UTF-8, at most `largestReasonBytes`); empty for no reason.
    public var reason: String
    /// When the close frame came, in milliseconds after the `101`; nil when not known.
    public var offsetMilliseconds: Double?

    /// A close from `from`, with its code, reason and offset.
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

    /// The most bytes of reason a close frame carries: a control frame holds 125 bytes, the code takes 2
    /// (RFC 6455 5.5).
    public static let largestReasonBytes = 123

    /// `reason` cut to at most `largestReasonBytes` bytes of UTF-8 on a character boundary, so the frame's
    /// reason stays valid UTF-8 (a redacted reason, a miss's description can be longer).
    public static func cut(_ reason: String) -> String {
        guard reason.utf8.count > largestReasonBytes else { return reason }
        var end = reason.utf8.index(reason.utf8.startIndex, offsetBy: largestReasonBytes)
        while end > reason.utf8.startIndex && UTF8.isContinuation(reason.utf8[end]) {
            end = reason.utf8.index(before: end)
        }
        return String(reason.utf8[..<end]) ?? ""
    }
}
