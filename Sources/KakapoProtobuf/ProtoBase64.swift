/// Base64 as proto3 JSON writes bytes (standard alphabet, padded) and reads them (standard or URL-safe
/// alphabet, padding optional).
enum ProtoBase64 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    static func encode(_ bytes: some Collection<UInt8>) -> String {
        var output: [UInt8] = []
        output.reserveCapacity((bytes.count + 2) / 3 * 4)
        var iterator = bytes.makeIterator()
        while let first = iterator.next() {
            let second = iterator.next()
            let third = iterator.next()
            let chunk = UInt32(first) << 16 | UInt32(second ?? 0) << 8 | UInt32(third ?? 0)
            output.append(alphabet[Int(chunk >> 18 & 63)])
            output.append(alphabet[Int(chunk >> 12 & 63)])
            output.append(second == nil ? UInt8(ascii: "=") : alphabet[Int(chunk >> 6 & 63)])
            output.append(third == nil ? UInt8(ascii: "=") : alphabet[Int(chunk & 63)])
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// The bytes, or nil when the text is not base64.
    static func decode(_ text: String) -> [UInt8]? {
        var values: [UInt8] = []
        var padding = 0
        for byte in text.utf8 {
            if byte == UInt8(ascii: "=") {
                padding += 1
                continue
            }
            guard padding == 0, let value = sextet(byte) else { return nil }
            values.append(value)
        }
        guard values.count % 4 != 1, padding <= 2, padding == 0 || (values.count + padding) % 4 == 0 else {
            return nil
        }
        var output: [UInt8] = []
        output.reserveCapacity(values.count * 3 / 4)
        var index = 0
        while index < values.count {
            let count = min(4, values.count - index)
            var chunk: UInt32 = 0
            for offset in 0..<4 { chunk = chunk << 6 | UInt32(offset < count ? values[index + offset] : 0) }
            output.append(UInt8(truncatingIfNeeded: chunk >> 16))
            if count > 2 { output.append(UInt8(truncatingIfNeeded: chunk >> 8)) }
            if count > 3 { output.append(UInt8(truncatingIfNeeded: chunk)) }
            index += 4
        }
        return output
    }

    private static func sextet(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): byte - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): byte - UInt8(ascii: "a") + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0") + 52
        case UInt8(ascii: "+"), UInt8(ascii: "-"): 62
        case UInt8(ascii: "/"), UInt8(ascii: "_"): 63
        default: nil
        }
    }
}
