/// The exact value of a JSON number literal in a normal form, so two spellings of one number compare
/// equal (`1.0`, `1`, `1e0`, `10e-1`; `-0` and `0`) and two different numbers never do, however long
/// (`12345678901234567890123456789` is not `...788`, `7e999` is not `1e400`). Doubles cannot tell those
/// apart; the decimal digits can.
struct JSONDecimal: Hashable, Sendable {
    /// False for zero, whatever its sign.
    let negative: Bool
    /// The significant digits (ASCII), without leading or trailing zeros; empty for zero.
    let digits: [UInt8]
    /// The power of ten the digits are multiplied by (added to `hugeExponent` when there is one).
    let exponent: Int
    /// An exponent too long for an `Int` (more than 15 digits), as written without leading zeros and with
    /// its sign. Such numbers are equal only when their exponents are written alike.
    let hugeExponent: String?

    /// The value of `literal`; nil when it is not a number (`-`, `1.`, `.5`, `1e` are not).
    init?(_ literal: String) {
        let bytes = Array(literal.utf8)
        var index = 0
        func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }
        func digitRun() -> ArraySlice<UInt8> {
            let start = index
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
            return bytes[start..<index]
        }
        var negative = false
        if index < bytes.count, bytes[index] == UInt8(ascii: "-") || bytes[index] == UInt8(ascii: "+") {
            negative = bytes[index] == UInt8(ascii: "-")
            index += 1
        }
        let integer = digitRun()
        guard !integer.isEmpty else { return nil }
        var fraction: ArraySlice<UInt8> = []
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            fraction = digitRun()
            guard !fraction.isEmpty else { return nil }
        }
        var written = 0
        var huge: String?
        if index < bytes.count, bytes[index] | 0x20 == UInt8(ascii: "e") {
            index += 1
            var exponentNegative = false
            if index < bytes.count, bytes[index] == UInt8(ascii: "-") || bytes[index] == UInt8(ascii: "+") {
                exponentNegative = bytes[index] == UInt8(ascii: "-")
                index += 1
            }
            let run = digitRun()
            guard !run.isEmpty else { return nil }
            let significant = run.drop { $0 == UInt8(ascii: "0") }
            if significant.count > 15 {
                huge = (exponentNegative ? "-" : "") + String(decoding: significant, as: UTF8.self)
            } else {
                written = significant.reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) }
                if exponentNegative { written = -written }
            }
        }
        guard index == bytes.count else { return nil }
        // digits × 10^(written - fraction digits), then without leading and trailing zeros.
        var all = Array(integer) + Array(fraction)
        let leading = all.prefix { $0 == UInt8(ascii: "0") }.count
        all.removeFirst(leading)
        var trailing = 0
        while let last = all.last, last == UInt8(ascii: "0") {
            all.removeLast()
            trailing += 1
        }
        if all.isEmpty {
            (self.negative, self.digits, self.exponent, self.hugeExponent) = (false, [], 0, nil)
        } else {
            (self.negative, self.digits) = (negative, all)
            self.exponent = written - fraction.count + trailing
            self.hugeExponent = huge
        }
    }

    /// -1, 0 or 1 as `a` is less than, equal to or greater than `b`, exactly.
    static func order(_ a: JSONDecimal, _ b: JSONDecimal) -> Int {
        let (signA, signB) = (a.sign, b.sign)
        if signA != signB { return signA < signB ? -1 : 1 }
        if signA == 0 { return 0 }
        let magnitude = orderOfMagnitude(a, b)
        return signA * magnitude
    }

    private var sign: Int { digits.isEmpty ? 0 : (negative ? -1 : 1) }

    /// The order of |a| and |b|, both non-zero: first by the position of the leading digit, then digit by
    /// digit.
    private static func orderOfMagnitude(_ a: JSONDecimal, _ b: JSONDecimal) -> Int {
        if a.hugeExponent != nil || b.hugeExponent != nil {
            let (x, y) = (hugeRank(a), hugeRank(b))
            if x != y { return x < y ? -1 : 1 }
            if a.hugeExponent != b.hugeExponent {
                // Both huge with the same sign: the longer (then larger) exponent is further from zero.
                let (p, q) = (a.hugeExponent!, b.hugeExponent!)
                let positive = !p.hasPrefix("-")
                let farther = p.count != q.count ? p.count > q.count : p > q
                return farther == positive ? 1 : -1
            }
        }
        // The leading digit sits at 10^(count + exponent - 1); digits.count is at most the literal's length.
        let (leadA, leadB) = (a.digits.count + a.exponent, b.digits.count + b.exponent)
        if leadA != leadB { return leadA < leadB ? -1 : 1 }
        for (x, y) in zip(a.digits, b.digits) where x != y { return x < y ? -1 : 1 }
        return a.digits.count == b.digits.count ? 0 : (a.digits.count < b.digits.count ? -1 : 1)
    }

    /// -1 for a huge negative exponent (tiny), 1 for a huge positive one, 0 for an ordinary exponent.
    private static func hugeRank(_ value: JSONDecimal) -> Int {
        guard let huge = value.hugeExponent else { return 0 }
        return huge.hasPrefix("-") ? -1 : 1
    }
}
