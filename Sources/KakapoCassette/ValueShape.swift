import KakapoHTTP

/// The shapes of values a client makes afresh for every call, which a recording cannot hold as they will be
/// sent again (design 5.3, matching by shape): a UUID, an ISO 8601 time or epoch seconds or milliseconds
/// within a day of when it was sent, and a long random nonce in hex or base64. Two values match by shape when
/// both are of the same shape (and, for nonces, the same length).
public enum ValueShape: Hashable, Sendable {
    case uuid
    case time
    case epochSeconds
    case epochMilliseconds
    /// Hex of this many digits, at least 16, with both digits and letters.
    case hex(Int)
    /// Base64 or base64url of this many characters, at least 20, with upper and lower case letters and digits.
    case base64(Int)

    /// How far from when it was sent a time may be and still be of a volatile shape: a day.
    public static let timeWindow: Int64 = 86_400

    /// The shape of `text`, sent at `sentAt` (seconds since 1970; nil when unknown, when times are taken at
    /// any date); nil when it is none of them. Bounded: values over 256 bytes have no shape.
    public static func of(_ text: String, sentAt: Int64?) -> ValueShape? {
        let bytes = text.utf8
        guard bytes.count >= 9, bytes.count <= 256 else { return nil }
        if isUUID(bytes) { return .uuid }
        if let time = ISOTime.parse(text) {
            return near(time.seconds, sentAt) ? .time : nil
        }
        if bytes.allSatisfy({ (0x30...0x39).contains($0) }) {
            guard let value = Int64(text) else { return nil }
            switch bytes.count {
            case 10: return near(value, sentAt) ? .epochSeconds : nil
            case 13: return near(value / 1_000, sentAt) ? .epochMilliseconds : nil
            default: return nil
            }
        }
        guard bytes.count >= 16 else { return nil }
        var digits = false
        var hexLetters = false
        var upper = false
        var lower = false
        var other = false
        for byte in bytes {
            switch byte {
            case 0x30...0x39: digits = true
            case 0x61...0x66, 0x41...0x46:
                hexLetters = true
                if byte >= 0x61 { lower = true } else { upper = true }
            case 0x67...0x7A: lower = true
            case 0x47...0x5A: upper = true
            case 0x2B, 0x2F, 0x2D, 0x5F, 0x3D: other = true
            default: return nil
            }
        }
        let onlyHex = !other && bytes.allSatisfy { !((0x67...0x7A).contains($0) || (0x47...0x5A).contains($0)) }
        if onlyHex, digits, hexLetters, !(upper && lower) { return .hex(bytes.count) }
        if digits && upper && lower && bytes.count >= 20 { return .base64(bytes.count) }
        return nil
    }

    /// Whether `live` (sent now) and `recorded` (sent at `recordedAt`) are of the same volatile shape.
    public static func same(_ live: String, _ recorded: String, now: Int64, recordedAt: Int64?) -> ValueShape? {
        guard let shape = of(live, sentAt: now), shape == of(recorded, sentAt: recordedAt) else { return nil }
        return shape
    }

    private static func near(_ seconds: Int64, _ sentAt: Int64?) -> Bool {
        guard let sentAt else { return (HTTPDate.earliest...HTTPDate.latest).contains(seconds) }
        return abs(seconds - sentAt) <= timeWindow
    }

    private static func isUUID(_ bytes: String.UTF8View) -> Bool {
        guard bytes.count == 36 else { return false }
        for (index, byte) in bytes.enumerated() {
            if index == 8 || index == 13 || index == 18 || index == 23 {
                guard byte == 0x2D else { return false }
            } else {
                guard (0x30...0x39).contains(byte) || (0x61...0x66).contains(byte) || (0x41...0x46).contains(byte)
                else { return false }
            }
        }
        return true
    }
}
