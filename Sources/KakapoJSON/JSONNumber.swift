/// A JSON number kept as the text it was written with (`1.0` stays `1.0`, `1e3` stays `1e3`). `==` and
/// hashing compare the text (so output is what was read); `isEquivalent(to:)` compares values.
public struct JSONNumber: Hashable, Sendable, CustomStringConvertible {
    /// The number exactly as written in JSON.
    public let literal: String

    /// Wraps text that is already a valid JSON number.
    public init(literal: String) { self.literal = literal }

    public init(_ value: Int) { self.literal = String(value) }

    public init(_ value: Double) {
        if value.isFinite, value == value.rounded(.towardZero), abs(value) < 1e15 {
            self.literal = String(Int64(value))
        } else if value.isFinite {
            self.literal = "\(value)"
        } else {
            self.literal = "0"  // JSON has no infinity or NaN
        }
    }

    public var description: String { literal }

    /// The value as an integer, when it is one exactly.
    public var intValue: Int? { Int(literal) }

    /// The value as a double (approximate for very long literals).
    public var doubleValue: Double { Double(literal) ?? 0 }

    /// True when both literals denote the same number exactly, compared by their decimal digits (not as
    /// doubles, which would make `7e999` equal `1e400` and every long integer equal its neighbours):
    /// `1.0`, `1`, `1e0` and `10e-1` are one number, as are `-0` and `0`.
    public func isEquivalent(to other: JSONNumber) -> Bool {
        if literal == other.literal { return true }
        guard let value = JSONDecimal(literal), let otherValue = JSONDecimal(other.literal) else { return false }
        return value == otherValue
    }

    /// -1, 0 or 1 as this number is less than, equal to or greater than `other`, by exact decimal value
    /// (doubles only for a literal that is not a JSON number).
    public func compare(to other: JSONNumber) -> Int {
        guard let value = JSONDecimal(literal), let otherValue = JSONDecimal(other.literal) else {
            return doubleValue < other.doubleValue ? -1 : (doubleValue > other.doubleValue ? 1 : 0)
        }
        return JSONDecimal.order(value, otherValue)
    }
}
