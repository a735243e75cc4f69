/// Writes `JSONValue`s as UTF-8 bytes. Output is deterministic: object members are written in their stored
/// order, numbers as their literal text, and the same value always gives the same bytes.
public struct JSONWriter: Sendable {
    /// How the output is laid out.
    public enum Layout: Sendable, Hashable {
        /// No whitespace at all: `{"a":[1,2]}`.
        case compact
        /// One member per line, indented by `indent` spaces. Arrays of scalars that fit in `inlineWidth`
        /// characters stay on one line (`["Content-Type", "application/json"]`), which keeps files short
        /// and diffs small.
        case pretty(indent: Int, inlineWidth: Int)

        /// Two-space indentation with short scalar arrays inline.
        public static let readable = Layout.pretty(indent: 2, inlineWidth: 100)
    }

    public var layout: Layout

    public init(layout: Layout = .compact) { self.layout = layout }

    /// The bytes of `value`, without a trailing newline.
    public func write(_ value: JSONValue) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(256)
        write(value, into: &output)
        return output
    }

    /// Appends the bytes of `value` to `output`.
    public func write(_ value: JSONValue, into output: inout [UInt8]) {
        switch layout {
        case .compact: Self.writeCompact(value, into: &output)
        case .pretty(let indent, let inlineWidth):
            Self.writePretty(value, indent: indent, inlineWidth: inlineWidth, level: 0, into: &output)
        }
    }

    /// Appends the bytes of `value` as if it stood `level` levels deep in a larger document (pretty
    /// layouts indent nested lines accordingly; the first line is not indented).
    public func write(_ value: JSONValue, level: Int, into output: inout [UInt8]) {
        switch layout {
        case .compact: Self.writeCompact(value, into: &output)
        case .pretty(let indent, let inlineWidth):
            Self.writePretty(value, indent: indent, inlineWidth: inlineWidth, level: level, into: &output)
        }
    }

    /// The text of `value`.
    public func string(_ value: JSONValue) -> String {
        String(decoding: write(value), as: UTF8.self)
    }

    static func writeCompact(_ value: JSONValue, into output: inout [UInt8]) {
        switch value {
        case .null: output.append(contentsOf: "null".utf8)
        case .bool(let bool): output.append(contentsOf: (bool ? "true" : "false").utf8)
        case .number(let number): output.append(contentsOf: number.literal.utf8)
        case .string(let string): writeString(string, into: &output)
        case .array(let elements):
            output.append(UInt8(ascii: "["))
            for (offset, element) in elements.enumerated() {
                if offset > 0 { output.append(UInt8(ascii: ",")) }
                writeCompact(element, into: &output)
            }
            output.append(UInt8(ascii: "]"))
        case .object(let object):
            output.append(UInt8(ascii: "{"))
            for (offset, member) in object.members.enumerated() {
                if offset > 0 { output.append(UInt8(ascii: ",")) }
                writeString(member.key, into: &output)
                output.append(UInt8(ascii: ":"))
                writeCompact(member.value, into: &output)
            }
            output.append(UInt8(ascii: "}"))
        }
    }

    static func writePretty(
        _ value: JSONValue, indent: Int, inlineWidth: Int, level: Int, into output: inout [UInt8]
    ) {
        switch value {
        case .array(let elements):
            if elements.isEmpty {
                output.append(contentsOf: "[]".utf8)
                return
            }
            if let inline = inlineScalars(elements, width: inlineWidth) {
                output.append(contentsOf: inline)
                return
            }
            output.append(UInt8(ascii: "["))
            for (offset, element) in elements.enumerated() {
                if offset > 0 { output.append(UInt8(ascii: ",")) }
                newline(indent * (level + 1), into: &output)
                writePretty(element, indent: indent, inlineWidth: inlineWidth, level: level + 1, into: &output)
            }
            newline(indent * level, into: &output)
            output.append(UInt8(ascii: "]"))
        case .object(let object):
            if object.isEmpty {
                output.append(contentsOf: "{}".utf8)
                return
            }
            output.append(UInt8(ascii: "{"))
            for (offset, member) in object.members.enumerated() {
                if offset > 0 { output.append(UInt8(ascii: ",")) }
                newline(indent * (level + 1), into: &output)
                writeString(member.key, into: &output)
                output.append(contentsOf: ": ".utf8)
                writePretty(member.value, indent: indent, inlineWidth: inlineWidth, level: level + 1, into: &output)
            }
            newline(indent * level, into: &output)
            output.append(UInt8(ascii: "}"))
        default:
            writeCompact(value, into: &output)
        }
    }

    static func inlineScalars(_ elements: [JSONValue], width: Int) -> [UInt8]? {
        var output: [UInt8] = [UInt8(ascii: "[")]
        for (offset, element) in elements.enumerated() {
            switch element {
            case .array, .object: return nil
            default: break
            }
            if offset > 0 { output.append(contentsOf: ", ".utf8) }
            writeCompact(element, into: &output)
            if output.count > width { return nil }
        }
        output.append(UInt8(ascii: "]"))
        return output.count <= width ? output : nil
    }

    static func newline(_ spaces: Int, into output: inout [UInt8]) {
        output.append(UInt8(ascii: "\n"))
        output.append(contentsOf: repeatElement(UInt8(ascii: " "), count: spaces))
    }

    static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

    /// Writes a string literal, escaping only what JSON requires (quote, backslash, control characters).
    public static func writeString(_ string: String, into output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        var string = string
        string.withUTF8 { bytes in
            // Runs without escapes (most strings are one) are copied whole.
            var start = 0
            for index in bytes.indices {
                let byte = bytes[index]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte == 0x7F else {
                    continue
                }
                if start < index { output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<index])) }
                appendEscaped(byte, into: &output)
                start = index + 1
            }
            if start < bytes.count { output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start...])) }
        }
        output.append(UInt8(ascii: "\""))
    }

    /// The escape sequence for a byte a JSON string cannot hold as it is.
    private static func appendEscaped(_ byte: UInt8, into output: inout [UInt8]) {
        switch byte {
        case UInt8(ascii: "\""): output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
        case UInt8(ascii: "\\"): output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
        case 0x0A: output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
        case 0x0D: output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
        case 0x09: output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
        case 0x08: output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "b")])
        case 0x0C: output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "f")])
        default:
            output.append(contentsOf: "\\u00".utf8)
            output.append(hexDigits[Int(byte >> 4)])
            output.append(hexDigits[Int(byte & 0x0F)])
        }
    }
}
