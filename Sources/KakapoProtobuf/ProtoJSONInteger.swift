/// An integer written in JSON: a number literal or a string holding one, in any spelling that is an
/// integer exactly (`1`, `"1"`, `1.0`, `1e2`), checked against the range of the field's type.
struct ProtoJSONInteger {
    let isNegative: Bool
    let magnitude: UInt64
    /// True when the magnitude is past 2^64 - 1 (then no integer type holds it).
    let isTooLarge: Bool

    /// Nil when the text is not a number or not an integer.
    init?(_ text: String) {
        var bytes = Array(text.utf8)[...]
        guard bytes.count <= 400 else { return nil }
        isNegative = bytes.first == UInt8(ascii: "-")
        if isNegative { bytes = bytes.dropFirst() }
        func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }
        var digits: [UInt8] = []
        while let byte = bytes.first, isDigit(byte) {
            digits.append(byte - 0x30)
            bytes = bytes.dropFirst()
        }
        guard !digits.isEmpty else { return nil }
        var exponent = 0
        if bytes.first == UInt8(ascii: ".") {
            bytes = bytes.dropFirst()
            var fraction = 0
            while let byte = bytes.first, isDigit(byte) {
                digits.append(byte - 0x30)
                exponent -= 1
                fraction += 1
                bytes = bytes.dropFirst()
            }
            guard fraction > 0 else { return nil }
        }
        if let byte = bytes.first, byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E") {
            bytes = bytes.dropFirst()
            var sign = 1
            if let byte = bytes.first, byte == UInt8(ascii: "-") || byte == UInt8(ascii: "+") {
                sign = byte == UInt8(ascii: "-") ? -1 : 1
                bytes = bytes.dropFirst()
            }
            var written = 0
            var count = 0
            while let byte = bytes.first, isDigit(byte) {
                // Exponents past 400 make any integer we accept either zero digits or too large.
                if written < 1000 { written = written * 10 + Int(byte - 0x30) }
                count += 1
                bytes = bytes.dropFirst()
            }
            guard count > 0 else { return nil }
            exponent += sign * written
        }
        guard bytes.isEmpty else { return nil }
        // Drop the digits a negative exponent divides away; they must all be zeros.
        while exponent < 0 {
            guard let last = digits.popLast() else { break }
            guard last == 0 else { return nil }
            exponent += 1
        }
        if exponent < 0 { exponent = 0 }  // every digit was a zero: the value is 0
        var value: UInt64 = 0
        var isTooLarge = false
        for digit in digits + Array(repeating: 0, count: digits.contains(where: { $0 != 0 }) ? min(exponent, 25) : 0) {
            let (times, overflow) = value.multipliedReportingOverflow(by: 10)
            let (sum, carry) = times.addingReportingOverflow(UInt64(digit))
            guard !overflow, !carry else {
                isTooLarge = true
                break
            }
            value = sum
        }
        magnitude = value
        self.isTooLarge = isTooLarge
    }

    var int64: Int64? {
        if isTooLarge { return nil }
        if isNegative {
            if magnitude == UInt64(Int64.max) + 1 { return Int64.min }
            return magnitude <= UInt64(Int64.max) ? -Int64(magnitude) : nil
        }
        return magnitude <= UInt64(Int64.max) ? Int64(magnitude) : nil
    }

    var uint64: UInt64? { isTooLarge || isNegative && magnitude != 0 ? nil : magnitude }
}
