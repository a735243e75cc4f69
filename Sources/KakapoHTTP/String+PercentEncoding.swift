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
