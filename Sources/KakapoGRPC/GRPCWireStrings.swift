/// The length-delimited fields of a Protocol Buffers message, found without a schema, so redaction can look
/// at strings (and bytes) a message carries and replace some of them, the lengths around them written anew.
///
/// Without a schema a length-delimited field is a string, bytes, a packed list or a nested message; a field
/// whose bytes read as a whole message is walked as one (its own fields, then, if nothing in them changed,
/// its bytes as a whole, in case they were a string that merely looked like a message); any other is a leaf
/// handed to the transform. Nothing here traps: every varint and length is checked against the bytes that
/// remain, nesting stops at `maximumDepth` (deeper fields are leaves), and the bytes walked as messages are
/// bounded by `workFactor` times the message's size, past which fields are leaves too.
public enum GRPCWireStrings {
    /// The deepest nesting walked: Protocol Buffers' own parsers refuse messages nested deeper than 100 levels
    /// by default, so no service reads what lies deeper.
    public static let maximumDepth = 100
    /// How many times its size a message's bytes may be walked at most, over all levels.
    static let workFactor = 8

    /// What walking a message gave.
    public enum Outcome: Equatable, Sendable {
        /// The bytes are a message, and the transform changed nothing in it.
        case unchanged
        /// The bytes are a message; some of its fields were replaced.
        case rewritten([UInt8])
        /// The bytes do not read as a message (truncated, a wire type that does not exist, groups unbalanced).
        case notAMessage
    }

    /// Walks `message`, calling `transform` with each leaf field's bytes; a leaf it returns new bytes for is
    /// replaced by them (and its length, and those of the messages around it, written anew).
    public static func rewriting(_ message: [UInt8], _ transform: ([UInt8]) -> [UInt8]?) -> Outcome {
        var budget = message.count.multipliedReportingOverflow(by: workFactor).partialValue + 65_536
        if budget < 0 { budget = Int.max }
        return rewrite(message, 0..<message.count, depth: 0, budget: &budget, transform)
    }

    private struct Field {
        /// Where the length prefix starts (the tag is before it).
        let lengthStart: Int
        /// The field's bytes.
        let payload: Range<Int>
    }

    private static func rewrite(
        _ bytes: [UInt8], _ range: Range<Int>, depth: Int, budget: inout Int, _ transform: ([UInt8]) -> [UInt8]?
    ) -> Outcome {
        budget -= range.count
        guard let fields = lengthDelimitedFields(bytes, range) else { return .notAMessage }
        var output: [UInt8]?
        var copied = range.lowerBound
        for field in fields {
            var replacement: [UInt8]?
            var walked = false
            if depth + 1 < maximumDepth, budget >= field.payload.count, !field.payload.isEmpty {
                switch rewrite(bytes, field.payload, depth: depth + 1, budget: &budget, transform) {
                case .rewritten(let inner): replacement = inner
                case .unchanged: walked = true
                case .notAMessage: break
                }
            }
            if replacement == nil {
                // A nested message whose fields held nothing is looked at whole only when it could be text:
                // a string that happened to read as a message.
                let payload = Array(bytes[field.payload])
                if !walked || isValidUTF8(payload) { replacement = transform(payload) }
            }
            guard let replacement else { continue }
            if output == nil {
                output = []
                output?.reserveCapacity(range.count + 16)
            }
            output?.append(contentsOf: bytes[copied..<field.lengthStart])
            appendVarint(UInt64(replacement.count), to: &output)
            output?.append(contentsOf: replacement)
            copied = field.payload.upperBound
        }
        guard var output else { return .unchanged }
        output.append(contentsOf: bytes[copied..<range.upperBound])
        return .rewritten(output)
    }

    /// The length-delimited fields of the message in `range`, or nil when the bytes are not a message.
    private static func lengthDelimitedFields(_ bytes: [UInt8], _ range: Range<Int>) -> [Field]? {
        var fields: [Field] = []
        var groups: [UInt64] = []
        var index = range.lowerBound
        let end = range.upperBound
        while index < end {
            guard let tag = readVarint(bytes, &index, end: end), tag <= UInt64(UInt32.max), tag >> 3 >= 1 else {
                return nil
            }
            switch tag & 7 {
            case 0:
                guard readVarint(bytes, &index, end: end) != nil else { return nil }
            case 1:
                guard end - index >= 8 else { return nil }
                index += 8
            case 2:
                let lengthStart = index
                guard let length = readVarint(bytes, &index, end: end), length <= UInt64(end - index) else {
                    return nil
                }
                let payload = index..<(index + Int(length))
                fields.append(Field(lengthStart: lengthStart, payload: payload))
                index = payload.upperBound
            case 3:
                guard groups.count < maximumDepth else { return nil }
                groups.append(tag >> 3)
            case 4:
                guard groups.last == tag >> 3 else { return nil }
                groups.removeLast()
            case 5:
                guard end - index >= 4 else { return nil }
                index += 4
            default:
                return nil
            }
        }
        return groups.isEmpty ? fields : nil
    }

    /// A base-128 varint of at most 10 bytes, or nil when it is cut short or longer.
    private static func readVarint(_ bytes: [UInt8], _ index: inout Int, end: Int) -> UInt64? {
        var result: UInt64 = 0
        for count in 0..<10 {
            guard index < end else { return nil }
            let byte = bytes[index]
            index += 1
            if count == 9, byte > 1 { return nil }
            result |= UInt64(byte & 0x7F) << UInt64(7 * count)
            if byte & 0x80 == 0 { return result }
        }
        return nil
    }

    private static func appendVarint(_ value: UInt64, to output: inout [UInt8]?) {
        var value = value
        while value >= 0x80 {
            output?.append(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        output?.append(UInt8(value))
    }

    /// Whether `bytes` are valid UTF-8 (so they may be a string field).
    public static func isValidUTF8(_ bytes: [UInt8]) -> Bool {
        var iterator = bytes.makeIterator()
        var decoder = UTF8()
        while true {
            switch decoder.decode(&iterator) {
            case .scalarValue: continue
            case .emptyInput: return true
            case .error: return false
            }
        }
    }
}
