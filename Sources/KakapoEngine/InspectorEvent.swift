#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One journaled request as the inspector lists it and `/__kakapo/events` sends it: what was asked, who
/// answered, how long it took and how large it was. Made on the request's path from values it already
/// has (no formatting there): its JSON is written later, once, off that path (`json(into:)`).
package struct InspectorEvent: Sendable {
    /// Monotonic over the run (admin requests take ids too, so ids may skip).
    package internal(set) var id: Int
    /// Wall-clock time it was journaled, in milliseconds since 1970.
    package let milliseconds1970: Int64
    package let method: String
    /// The origin the client named (a forward proxy's request); nil when it named none.
    package let origin: String?
    /// The origin's authority, else the `Host` header (cut to the journal's URL limit).
    package let host: String
    /// The target, redacted as the journal redacts it, cut to the journal's URL limit.
    package let target: String
    package let status: Int
    /// The answer's source, or `recorded` for an upstream answer written into a cassette.
    package let source: String
    package let duration: Double
    package let requestBytes: Int
    /// Nil for a live stream, whose size is not known when it is journaled.
    package let responseBytes: Int?
    package let contentType: String?
    package let session: String?
    package let interaction: Int?
    package let stream: Bool
    package let webSocket: Bool

    /// Absolute (scheme://host/target), made when it is written rather than on the request's path.
    package var url: String { (origin ?? "http://\(host)") + target }

    /// The wall clock now, in milliseconds since 1970.
    package static func now() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec / 1_000_000)
    }

    /// Appends the event's JSON object (one line, the contract's keys) to `bytes`.
    package func json(into bytes: inout [UInt8]) {
        bytes.append(contentsOf: #"{"id":"#.utf8)
        bytes.append(contentsOf: String(id).utf8)
        bytes.append(contentsOf: #","time":""#.utf8)
        Self.timestamp(milliseconds1970, into: &bytes)
        bytes.append(UInt8(ascii: "\""))
        Self.key("method", method, into: &bytes)
        // The URL's pieces written one after the other, not joined into a string first.
        bytes.append(contentsOf: #","url":""#.utf8)
        if let origin {
            Self.escaped(origin, into: &bytes)
        } else {
            bytes.append(contentsOf: "http://".utf8)
            Self.escaped(host, into: &bytes)
        }
        Self.escaped(target, into: &bytes)
        bytes.append(UInt8(ascii: "\""))
        Self.key("host", host, into: &bytes)
        Self.key("target", target, into: &bytes)
        bytes.append(contentsOf: #","status":"#.utf8)
        bytes.append(contentsOf: String(status).utf8)
        Self.key("source", source, into: &bytes)
        bytes.append(contentsOf: #","ms":"#.utf8)
        bytes.append(contentsOf: Self.decimal(duration).utf8)
        bytes.append(contentsOf: #","requestBytes":"#.utf8)
        bytes.append(contentsOf: String(requestBytes).utf8)
        bytes.append(contentsOf: #","responseBytes":"#.utf8)
        bytes.append(contentsOf: (responseBytes.map { String($0) } ?? "null").utf8)
        if let contentType { Self.key("contentType", contentType, into: &bytes) }
        if let session { Self.key("session", session, into: &bytes) }
        if let interaction {
            bytes.append(contentsOf: #","interaction":"#.utf8)
            bytes.append(contentsOf: String(interaction).utf8)
        }
        bytes.append(contentsOf: (stream ? #","stream":true"# : #","stream":false"#).utf8)
        bytes.append(contentsOf: (webSocket ? #","webSocket":true}"# : #","webSocket":false}"#).utf8)
    }

    /// The event's JSON object on its own.
    package var json: [UInt8] {
        var bytes: [UInt8] = []
        json(into: &bytes)
        return bytes
    }

    private static func key(_ name: StaticString, _ value: String, into bytes: inout [UInt8]) {
        bytes.append(contentsOf: #",""#.utf8)
        bytes.append(contentsOf: UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount))
        bytes.append(contentsOf: #"":"#.utf8)
        string(value, into: &bytes)
    }

    /// `value` as a JSON string: quotes, backslashes and control characters escaped, the rest as UTF-8.
    package static func string(_ value: String, into bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "\""))
        escaped(value, into: &bytes)
        bytes.append(UInt8(ascii: "\""))
    }

    /// `value`'s UTF-8 with what a JSON string must escape escaped, without the quotes.
    private static func escaped(_ value: String, into bytes: inout [UInt8]) {
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "\""): bytes.append(contentsOf: #"\""#.utf8)
            case UInt8(ascii: "\\"): bytes.append(contentsOf: #"\\"#.utf8)
            case UInt8(ascii: "\n"): bytes.append(contentsOf: #"\n"#.utf8)
            case UInt8(ascii: "\r"): bytes.append(contentsOf: #"\r"#.utf8)
            case UInt8(ascii: "\t"): bytes.append(contentsOf: #"\t"#.utf8)
            case 0..<0x20, 0x7F:
                bytes.append(contentsOf: #"\u00"#.utf8)
                bytes.append(hex[Int(byte >> 4)])
                bytes.append(hex[Int(byte & 0xF)])
            default: bytes.append(byte)
            }
        }
    }

    private static let hex: [UInt8] = Array("0123456789abcdef".utf8)

    /// `value` with at most three decimals (`1.234`, `12`); 0 for what is not a finite, non-negative
    /// number below a trillion.
    package static func decimal(_ value: Double) -> String {
        guard value.isFinite, value >= 0, value < 1e12 else { return "0" }
        let thousandths = Int64((value * 1000).rounded())
        let whole = thousandths / 1000
        let fraction = thousandths % 1000
        guard fraction != 0 else { return String(whole) }
        var digits = String(fraction)
        digits = String(repeating: "0", count: 3 - digits.count) + digits
        while digits.hasSuffix("0") { digits.removeLast() }
        return "\(whole).\(digits)"
    }

    /// `2026-11-24T11:00:00.123Z` for a time in milliseconds since 1970.
    package static func timestamp(_ milliseconds: Int64) -> String {
        var bytes: [UInt8] = []
        timestamp(milliseconds, into: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends `timestamp(milliseconds)`'s bytes, digit by digit (no strings: it runs for every event).
    static func timestamp(_ milliseconds: Int64, into bytes: inout [UInt8]) {
        var seconds = time_t(milliseconds / 1000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func digits(_ value: Int, _ width: Int) {
            // Years past 9999 (or before 0) do not fit the format; they are written as 0000 rather than trap.
            var value = (0...9999).contains(value) ? value : 0
            var divisor = 1
            for _ in 1..<width { divisor *= 10 }
            for _ in 0..<width {
                bytes.append(UInt8(ascii: "0") + UInt8(value / divisor % 10))
                value %= divisor
                divisor /= 10
            }
        }
        digits(Int(parts.tm_year) + 1900, 4)
        bytes.append(UInt8(ascii: "-"))
        digits(Int(parts.tm_mon) + 1, 2)
        bytes.append(UInt8(ascii: "-"))
        digits(Int(parts.tm_mday), 2)
        bytes.append(UInt8(ascii: "T"))
        digits(Int(parts.tm_hour), 2)
        bytes.append(UInt8(ascii: ":"))
        digits(Int(parts.tm_min), 2)
        bytes.append(UInt8(ascii: ":"))
        digits(Int(parts.tm_sec), 2)
        bytes.append(UInt8(ascii: "."))
        digits(Int(milliseconds % 1000 + 1000) % 1000, 3)
        bytes.append(UInt8(ascii: "Z"))
    }
}
