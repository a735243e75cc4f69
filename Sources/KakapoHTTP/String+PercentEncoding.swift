extension String {
    /// Percent-decodes `%XX` sequences, and `+` as a space when `plusAsSpace` (query strings); malformed
    /// sequences and invalid UTF-8 are kept rather than rejected.
    public func removingPercentEncodingLeniently(plusAsSpace: Bool = true) -> String {
        guard utf8.contains(UInt8(ascii: "%")) || (plusAsSpace && utf8.contains(UInt8(ascii: "+"))) else { return self }
        var bytes: [UInt8] = []
        let utf8 = Array(self.utf8)
        var index = 0
        while index < utf8.count {
            let byte = utf8[index]
            if byte == UInt8(ascii: "%"), index + 2 < utf8.count,
                let high = hexValue(utf8[index + 1]), let low = hexValue(utf8[index + 2])
            {
                bytes.append(high << 4 | low)
                index += 3
            } else {
                bytes.append(plusAsSpace && byte == UInt8(ascii: "+") ? UInt8(ascii: " ") : byte)
                index += 1
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

private func hexValue(_ byte: UInt8) -> UInt8? {
    switch byte {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
    default: return nil
    }
}

extension String {
    /// The string percent-encoded for a query name or value: everything but unreserved characters
    /// (RFC 3986 section 2.3) is encoded.
    public func percentEncodedForQuery() -> String { percentEncoded(keeping: isUnreserved) }

    /// The string percent-encoded as one path segment: unreserved characters, sub-delimiters, `:` and `@`
    /// stay (RFC 3986 section 3.3); everything else (space, `/`, `?`, `#`, `%`, non-ASCII) is encoded.
    public func percentEncodedForPathSegment() -> String {
        percentEncoded { isUnreserved($0) || "!$&'()*+,;=:@".utf8.contains($0) }
    }

    private func percentEncoded(keeping keep: (UInt8) -> Bool) -> String {
        var result = ""
        for byte in utf8 {
            if keep(byte) {
                result.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                let hex = String(byte, radix: 16, uppercase: true)
                result += "%" + (hex.count == 1 ? "0" + hex : hex)
            }
        }
        return result
    }
}

private func isUnreserved(_ byte: UInt8) -> Bool {
    switch byte {
    case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
        UInt8(ascii: "0")...UInt8(ascii: "9"),
        UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
        return true
    default:
        return false
    }
}

extension String {
    /// The string with its percent-escapes in one spelling, for comparing URLs (RFC 3986 section 6.2.2):
    /// escapes of unreserved characters become the characters (`%7E` is `~`, `%41` is `A`), other escapes
    /// get upper-case hex digits (`%c3%a9` is `%C3%A9`), and bytes a URL may not hold (non-ASCII, space,
    /// controls, `"<>\^`{|}`) are escaped with upper-case hex, so raw UTF-8 equals the same bytes escaped.
    /// Reserved escapes stay escaped: `%2F` is not `/`. A malformed `%` is kept. Returns the string itself,
    /// without allocating, when it holds no `%` and no byte to escape (the usual URL).
    public func percentEncodingNormalized() -> String {
        guard Self.percentEncodingNeedsNormalizing(utf8) else { return self }
        let source = Array(utf8)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(source.count + 8)
        var index = 0
        while index < source.count {
            let byte = source[index]
            if byte == UInt8(ascii: "%"), index + 2 < source.count,
                let high = hexValue(source[index + 1]), let low = hexValue(source[index + 2])
            {
                let value = high << 4 | low
                if isUnreserved(value) { bytes.append(value) } else { appendEscape(value, to: &bytes) }
                index += 3
            } else {
                if isOutsideURL(byte) { appendEscape(byte, to: &bytes) } else { bytes.append(byte) }
                index += 1
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Whether `percentEncodingNormalized()` would change a string of these bytes: whether they hold a `%`
    /// or a byte a URL may not hold.
    public static func percentEncodingNeedsNormalizing(_ bytes: some Sequence<UInt8>) -> Bool {
        bytes.contains { $0 == UInt8(ascii: "%") || isOutsideURL($0) }
    }

    /// The string with every byte a URL may not hold raw (non-ASCII, space, controls) escaped with
    /// upper-case hex (RFC 3986 section 2.1), everything else (existing escapes too) kept as it is: a
    /// request target as Kakapo sends it upstream and records it. Returns the string itself when there is
    /// nothing to escape.
    public func escapingRawBytes() -> String {
        guard utf8.contains(where: isRawInURL) else { return self }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(utf8.count + 16)
        for byte in utf8 {
            if isRawInURL(byte) { appendEscape(byte, to: &bytes) } else { bytes.append(byte) }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// `%XX` for `byte` with upper-case hex digits (RFC 3986 section 2.1), handed to `write` a byte at a time:
/// the one spelling of an escape Kakapo writes, into arrays here and into the connection's buffers.
public func writePercentEscape(of byte: UInt8, _ write: (UInt8) -> Void) {
    func hex(_ digit: UInt8) -> UInt8 { digit < 10 ? UInt8(ascii: "0") + digit : UInt8(ascii: "A") + digit - 10 }
    write(UInt8(ascii: "%"))
    write(hex(byte >> 4))
    write(hex(byte & 0x0F))
}

private func appendEscape(_ byte: UInt8, to bytes: inout [UInt8]) {
    writePercentEscape(of: byte) { bytes.append($0) }
}

/// Bytes that never stand raw in a URL sent on the wire: controls, space, DEL and non-ASCII.
private func isRawInURL(_ byte: UInt8) -> Bool { byte <= 0x20 || byte >= 0x7F }

/// Bytes RFC 3986 allows nowhere in a URL, escaped or not: `isRawInURL` and `"<>\^`{|}`.
private func isOutsideURL(_ byte: UInt8) -> Bool {
    switch byte {
    case 0...0x20, 0x7F...0xFF: return true
    case UInt8(ascii: "\""), UInt8(ascii: "<"), UInt8(ascii: ">"), UInt8(ascii: "\\"), UInt8(ascii: "^"),
        UInt8(ascii: "`"), UInt8(ascii: "{"), UInt8(ascii: "|"), UInt8(ascii: "}"):
        return true
    default: return false
    }
}
