/// How a JSON document was laid out, so it can be written back byte for byte after being stored as a
/// value: one line (`compact` `{"a":1}` or `spaced` `{"a": 1, "b": 2}`) or one member per line with an
/// indent (`indent:2`, `indent:4`, `indent:tab`), and whether a newline ends it.
public struct JSONLayout: Hashable, Sendable, CustomStringConvertible {
    /// The indent of one level; nil writes everything on one line.
    public let indent: String?
    /// What separates members on one line: `,` or `, `.
    public let itemSeparator: String
    /// What separates a key from its value: `:` or `: `.
    public let keySeparator: String
    public var trailingNewline: Bool

    public static let compact = JSONLayout(indent: nil, itemSeparator: ",", keySeparator: ":", trailingNewline: false)
    public static let spaced = JSONLayout(indent: nil, itemSeparator: ", ", keySeparator: ": ", trailingNewline: false)

    init(indent: String?, itemSeparator: String, keySeparator: String, trailingNewline: Bool) {
        self.indent = indent
        self.itemSeparator = itemSeparator
        self.keySeparator = keySeparator
        self.trailingNewline = trailingNewline
    }

    /// An indented layout: `indented("  ")` is two spaces per level.
    public static func indented(_ unit: String) -> JSONLayout {
        JSONLayout(indent: unit, itemSeparator: ",", keySeparator: ": ", trailingNewline: false)
    }

    /// The layout's name without the newline flag: `compact`, `spaced`, `indent:2`, `indent:tab`.
    public var description: String {
        guard let indent else { return itemSeparator == "," ? "compact" : "spaced" }
        return indent == "\t" ? "indent:tab" : "indent:\(indent.count)"
    }

    /// The layout with this name (`description`), or nil.
    public init?(name: String, trailingNewline: Bool = false) {
        switch name {
        case "compact": self = .compact
        case "spaced": self = .spaced
        case "indent:tab": self = .indented("\t")
        default:
            guard name.hasPrefix("indent:"), let count = Int(name.dropFirst(7)), (1...16).contains(count) else {
                return nil
            }
            self = .indented(String(repeating: " ", count: count))
        }
        self.trailingNewline = trailingNewline
    }

    /// The layout that writes `value` back as exactly `bytes`, or nil when none of the known ones does
    /// (escapes spelled differently, unusual spacing): then the bytes must be kept as text.
    public static func detect(_ bytes: [UInt8], value: JSONValue) -> JSONLayout? {
        var content = bytes[...]
        let newline = content.last == UInt8(ascii: "\n")
        if newline { content = content.dropLast() }
        var candidates: [JSONLayout] = []
        if let firstBreak = content.firstIndex(of: UInt8(ascii: "\n")) {
            let unit = content[(firstBreak + 1)...].prefix { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }
            guard !unit.isEmpty, unit.count <= 16 else { return nil }
            candidates.append(.indented(String(decoding: unit, as: UTF8.self)))
        } else {
            candidates = [.compact, .spaced]
        }
        for var candidate in candidates {
            candidate.trailingNewline = newline
            if candidate.write(value)[...] == bytes[...] { return candidate }
        }
        return nil
    }

    /// The bytes of `value` in this layout.
    public func write(_ value: JSONValue) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(256)
        write(value, level: 0, into: &output)
        if trailingNewline { output.append(UInt8(ascii: "\n")) }
        return output
    }

    private func write(_ value: JSONValue, level: Int, into output: inout [UInt8]) {
        switch value {
        case .array(let elements):
            if elements.isEmpty { return output.append(contentsOf: "[]".utf8) }
            output.append(UInt8(ascii: "["))
            for (offset, element) in elements.enumerated() {
                separate(first: offset == 0, level: level + 1, into: &output)
                write(element, level: level + 1, into: &output)
            }
            close(level: level, into: &output)
            output.append(UInt8(ascii: "]"))
        case .object(let object):
            if object.isEmpty { return output.append(contentsOf: "{}".utf8) }
            output.append(UInt8(ascii: "{"))
            for (offset, member) in object.members.enumerated() {
                separate(first: offset == 0, level: level + 1, into: &output)
                JSONWriter.writeString(member.key, into: &output)
                output.append(contentsOf: keySeparator.utf8)
                write(member.value, level: level + 1, into: &output)
            }
            close(level: level, into: &output)
            output.append(UInt8(ascii: "}"))
        default:
            JSONWriter.writeCompact(value, into: &output)
        }
    }

    private func separate(first: Bool, level: Int, into output: inout [UInt8]) {
        guard let indent else {
            if !first { output.append(contentsOf: itemSeparator.utf8) }
            return
        }
        if !first { output.append(UInt8(ascii: ",")) }
        output.append(UInt8(ascii: "\n"))
        for _ in 0..<level { output.append(contentsOf: indent.utf8) }
    }

    private func close(level: Int, into output: inout [UInt8]) {
        guard let indent else { return }
        output.append(UInt8(ascii: "\n"))
        for _ in 0..<level { output.append(contentsOf: indent.utf8) }
    }
}
