/// A strict JSON parser (RFC 8259) that keeps key order and number spelling, reports errors with line and
/// column, and bounds nesting depth so hostile input cannot exhaust the stack.
public struct JSONParser {
    /// Parsing options.
    public struct Options: Sendable {
        /// Reject an object that has the same key twice (cassettes do; API bodies may not).
        public var rejectDuplicateKeys: Bool
        /// The deepest nesting accepted.
        public var maximumDepth: Int

        public init(rejectDuplicateKeys: Bool = false, maximumDepth: Int = 512) {
            self.rejectDuplicateKeys = rejectDuplicateKeys
            self.maximumDepth = maximumDepth
        }
    }

    /// Parses one JSON document; only whitespace may follow it.
    public static func parse(_ bytes: some Collection<UInt8>, options: Options = Options()) throws(JSONParseError)
        -> JSONValue
    {
        let array = Array(bytes)
        return try array.withUnsafeBufferPointer { (buffer) throws(JSONParseError) -> JSONValue in
            var parser = Cursor(buffer: buffer, options: options, target: nil)
            return try parser.parseDocument()
        }
    }

    /// Parses one JSON document whose root is an object, handing each element of the array under
    /// `streamedKey` to `element` as soon as it is parsed instead of keeping it: the returned root has an
    /// empty array there. Memory stays at one element, whatever the length of the array. `element` gets
    /// the element and its index; an error it throws stops parsing and is rethrown.
    public static func parse(
        _ bytes: [UInt8], options: Options = Options(), streaming streamedKey: String,
        element: (JSONValue, Int) throws -> Void
    ) throws -> JSONValue {
        try bytes.withUnsafeBufferPointer { buffer in
            try withoutActuallyEscaping(element) { element in
                var parser = Cursor(buffer: buffer, options: options, target: nil)
                parser.streamedKey = streamedKey
                parser.streamHandler = element
                do {
                    return try parser.parseDocument()
                } catch {
                    if let failure = parser.streamFailure { throw failure }
                    throw error
                }
            }
        }
    }

    /// True when the first byte after any whitespace opens an object or an array: a cheap test before
    /// trying to parse a body as JSON.
    public static func looksLikeContainer(_ bytes: [UInt8]) -> Bool {
        guard let first = bytes.first(where: { $0 != 0x20 && $0 != 0x0A && $0 != 0x0D && $0 != 0x09 }) else {
            return false
        }
        return first == UInt8(ascii: "{") || first == UInt8(ascii: "[")
    }

    /// Parses a string containing one JSON document.
    public static func parse(_ text: String, options: Options = Options()) throws(JSONParseError) -> JSONValue {
        try parse(Array(text.utf8), options: options)
    }

    /// The 1-based line and column where the value at `path` starts, or nil if the document has no such
    /// value. Used to point at a value that parsed but has the wrong shape.
    public static func location(of path: [JSONPathComponent], in bytes: [UInt8]) -> (line: Int, column: Int)? {
        bytes.withUnsafeBufferPointer { buffer in
            var parser = Cursor(buffer: buffer, options: Options(), target: path)
            _ = try? parser.parseDocument()
            guard let offset = parser.targetOffset else { return nil }
            return lineAndColumn(of: offset, in: buffer)
        }
    }

    static func lineAndColumn(of offset: Int, in buffer: UnsafeBufferPointer<UInt8>) -> (line: Int, column: Int) {
        var line = 1
        var lineStart = 0
        var index = 0
        let end = min(offset, buffer.count)
        while index < end {
            if buffer[index] == UInt8(ascii: "\n") {
                line += 1
                lineStart = index + 1
            }
            index += 1
        }
        // Columns count characters, not bytes: skip UTF-8 continuation bytes.
        var column = 1
        index = lineStart
        while index < end {
            if buffer[index] & 0xC0 != 0x80 { column += 1 }
            index += 1
        }
        return (line, column)
    }
}

extension JSONParser {
    struct Cursor {
        let buffer: UnsafeBufferPointer<UInt8>
        let options: Options
        var index = 0
        var depth = 0
        // Location tracking, used only by `location(of:in:)`.
        let target: [JSONPathComponent]?
        var path: [JSONPathComponent] = []
        var targetOffset: Int?
        // Streaming, used only by `parse(_:options:streaming:element:)`.
        var streamedKey: String?
        var streamHandler: ((JSONValue, Int) throws -> Void)?
        var streamFailure: (any Error)?
        var rootKey: String?

        init(buffer: UnsafeBufferPointer<UInt8>, options: Options, target: [JSONPathComponent]?) {
            self.buffer = buffer
            self.options = options
            self.target = target
        }

        mutating func parseDocument() throws(JSONParseError) -> JSONValue {
            skipWhitespace()
            if index + 2 < buffer.count, buffer[index] == 0xEF, buffer[index + 1] == 0xBB, buffer[index + 2] == 0xBF {
                throw error("a byte order mark is not allowed; save the file as UTF-8 without BOM")
            }
            let value = try parseValue()
            skipWhitespace()
            if index < buffer.count { throw error("unexpected \(describeCurrent()) after the end of the document") }
            return value
        }

        func error(_ message: String, at offset: Int? = nil) -> JSONParseError {
            let at = offset ?? index
            let (line, column) = JSONParser.lineAndColumn(of: at, in: buffer)
            return JSONParseError(message: message, line: line, column: column, offset: at)
        }

        func describeCurrent() -> String {
            guard index < buffer.count else { return "end of input" }
            let byte = buffer[index]
            if byte >= 0x21 && byte < 0x7F { return "'\(Character(Unicode.Scalar(byte)))'" }
            return "byte 0x\(String(byte, radix: 16, uppercase: true))"
        }

        mutating func skipWhitespace() {
            while index < buffer.count {
                switch buffer[index] {
                case 0x20, 0x0A, 0x0D, 0x09: index += 1
                default: return
                }
            }
        }

        mutating func parseValue() throws(JSONParseError) -> JSONValue {
            if let target, targetOffset == nil, path == target { targetOffset = index }
            guard index < buffer.count else { throw error("unexpected end of input, expected a value") }
            switch buffer[index] {
            case UInt8(ascii: "{"): return try parseObject()
            case UInt8(ascii: "["): return try parseArray()
            case UInt8(ascii: "\""): return .string(try parseString())
            case UInt8(ascii: "t"): return try parseLiteral("true", .bool(true))
            case UInt8(ascii: "f"): return try parseLiteral("false", .bool(false))
            case UInt8(ascii: "n"): return try parseLiteral("null", .null)
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try parseNumber())
            default: throw error("unexpected \(describeCurrent()), expected a value")
            }
        }

        mutating func parseLiteral(_ word: StaticString, _ value: JSONValue) throws(JSONParseError) -> JSONValue {
            let count = word.utf8CodeUnitCount
            guard index + count <= buffer.count else { throw error("unexpected end of input, expected '\(word)'") }
            let start = word.utf8Start
            for offset in 0..<count where buffer[index + offset] != start[offset] {
                throw error("invalid literal, expected '\(word)'")
            }
            index += count
            return value
        }

        mutating func enter() throws(JSONParseError) {
            depth += 1
            if depth > options.maximumDepth { throw error("nesting deeper than \(options.maximumDepth) levels") }
        }

        mutating func parseObject() throws(JSONParseError) -> JSONValue {
            try enter()
            index += 1
            var object = JSONObject()
            // Small objects are checked for duplicate keys by a scan, large ones with a set.
            var seen: Set<String>? = nil
            skipWhitespace()
            if index < buffer.count, buffer[index] == UInt8(ascii: "}") {
                index += 1
                depth -= 1
                return .object(object)
            }
            while true {
                skipWhitespace()
                guard index < buffer.count, buffer[index] == UInt8(ascii: "\"") else {
                    throw error("unexpected \(describeCurrent()), expected a key in double quotes")
                }
                let keyOffset = index
                let key = try parseString()
                if options.rejectDuplicateKeys {
                    let duplicate: Bool
                    if object.count < 16 {
                        duplicate = object.members.contains { $0.key == key }
                    } else {
                        if seen == nil { seen = Set(object.keys) }
                        duplicate = !seen!.insert(key).inserted
                    }
                    if duplicate { throw error("duplicate key \"\(key)\"", at: keyOffset) }
                }
                skipWhitespace()
                guard index < buffer.count, buffer[index] == UInt8(ascii: ":") else {
                    throw error("unexpected \(describeCurrent()), expected ':' after the key")
                }
                index += 1
                skipWhitespace()
                if target != nil { path.append(.key(key)) }
                if depth == 1 { rootKey = key }
                let value = try parseValue()
                if target != nil { path.removeLast() }
                object.append(key: key, value: value)
                skipWhitespace()
                guard index < buffer.count else { throw error("unexpected end of input, expected ',' or '}'") }
                if buffer[index] == UInt8(ascii: ",") {
                    index += 1
                    continue
                }
                if buffer[index] == UInt8(ascii: "}") {
                    index += 1
                    depth -= 1
                    return .object(object)
                }
                throw error("unexpected \(describeCurrent()), expected ',' or '}'")
            }
        }

        mutating func parseArray() throws(JSONParseError) -> JSONValue {
            try enter()
            var streamed = 0
            index += 1
            var elements: [JSONValue] = []
            skipWhitespace()
            if index < buffer.count, buffer[index] == UInt8(ascii: "]") {
                index += 1
                depth -= 1
                return .array(elements)
            }
            while true {
                skipWhitespace()
                if target != nil { path.append(.index(elements.count)) }
                if depth == 2, let handler = streamHandler, rootKey == streamedKey {
                    let element = try parseValue()
                    do {
                        try handler(element, streamed)
                    } catch {
                        streamFailure = error
                        throw self.error("stopped by the element handler")
                    }
                    streamed += 1
                } else {
                    elements.append(try parseValue())
                }
                if target != nil { path.removeLast() }
                skipWhitespace()
                guard index < buffer.count else { throw error("unexpected end of input, expected ',' or ']'") }
                if buffer[index] == UInt8(ascii: ",") {
                    index += 1
                    continue
                }
                if buffer[index] == UInt8(ascii: "]") {
                    index += 1
                    depth -= 1
                    return .array(elements)
                }
                throw error("unexpected \(describeCurrent()), expected ',' or ']'")
            }
        }

        mutating func parseNumber() throws(JSONParseError) -> JSONNumber {
            let start = index
            if buffer[index] == UInt8(ascii: "-") { index += 1 }
            guard index < buffer.count, isDigit(buffer[index]) else { throw error("invalid number, expected a digit") }
            if buffer[index] == UInt8(ascii: "0") {
                index += 1
                if index < buffer.count, isDigit(buffer[index]) {
                    throw error("invalid number, leading zeros are not allowed")
                }
            } else {
                while index < buffer.count, isDigit(buffer[index]) { index += 1 }
            }
            if index < buffer.count, buffer[index] == UInt8(ascii: ".") {
                index += 1
                guard index < buffer.count, isDigit(buffer[index]) else {
                    throw error("invalid number, expected a digit after '.'")
                }
                while index < buffer.count, isDigit(buffer[index]) { index += 1 }
            }
            if index < buffer.count, buffer[index] == UInt8(ascii: "e") || buffer[index] == UInt8(ascii: "E") {
                index += 1
                if index < buffer.count, buffer[index] == UInt8(ascii: "+") || buffer[index] == UInt8(ascii: "-") {
                    index += 1
                }
                guard index < buffer.count, isDigit(buffer[index]) else {
                    throw error("invalid number, expected a digit in the exponent")
                }
                while index < buffer.count, isDigit(buffer[index]) { index += 1 }
            }
            let literal = String(decoding: UnsafeBufferPointer(rebasing: buffer[start..<index]), as: UTF8.self)
            return JSONNumber(literal: literal)
        }

        func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

        mutating func parseString() throws(JSONParseError) -> String {
            let quote = index
            index += 1
            let start = index
            // Fast path: no escapes.
            while index < buffer.count {
                let byte = buffer[index]
                if byte == UInt8(ascii: "\"") {
                    let slice = UnsafeBufferPointer(rebasing: buffer[start..<index])
                    index += 1
                    return try decodeUTF8(slice, at: start)
                }
                if byte == UInt8(ascii: "\\") { break }
                if byte < 0x20 { throw error("control character in a string; escape it") }
                index += 1
            }
            guard index < buffer.count else { throw error("unterminated string", at: quote) }
            var bytes = Array(UnsafeBufferPointer(rebasing: buffer[start..<index]))
            while index < buffer.count {
                let byte = buffer[index]
                if byte == UInt8(ascii: "\"") {
                    index += 1
                    return try bytes.withUnsafeBufferPointer { (slice) throws(JSONParseError) -> String in
                        try decodeUTF8(slice, at: start)
                    }
                }
                if byte < 0x20 { throw error("control character in a string; escape it") }
                if byte != UInt8(ascii: "\\") {
                    bytes.append(byte)
                    index += 1
                    continue
                }
                index += 1
                guard index < buffer.count else { break }
                let escaped = buffer[index]
                index += 1
                switch escaped {
                case UInt8(ascii: "\""): bytes.append(UInt8(ascii: "\""))
                case UInt8(ascii: "\\"): bytes.append(UInt8(ascii: "\\"))
                case UInt8(ascii: "/"): bytes.append(UInt8(ascii: "/"))
                case UInt8(ascii: "b"): bytes.append(0x08)
                case UInt8(ascii: "f"): bytes.append(0x0C)
                case UInt8(ascii: "n"): bytes.append(0x0A)
                case UInt8(ascii: "r"): bytes.append(0x0D)
                case UInt8(ascii: "t"): bytes.append(0x09)
                case UInt8(ascii: "u"):
                    var scalar = try parseHex4()
                    if scalar >= 0xD800 && scalar < 0xDC00 {
                        guard index + 1 < buffer.count, buffer[index] == UInt8(ascii: "\\"),
                            buffer[index + 1] == UInt8(ascii: "u")
                        else { throw error("unpaired surrogate in \\u escape") }
                        index += 2
                        let low = try parseHex4()
                        guard low >= 0xDC00 && low < 0xE000 else { throw error("invalid low surrogate in \\u escape") }
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    } else if scalar >= 0xDC00 && scalar < 0xE000 {
                        throw error("unpaired surrogate in \\u escape")
                    }
                    guard let unicode = Unicode.Scalar(scalar) else { throw error("invalid \\u escape") }
                    bytes.append(contentsOf: Array(String(Character(unicode)).utf8))
                default:
                    throw error("invalid escape '\\\(Character(Unicode.Scalar(escaped)))'", at: index - 2)
                }
            }
            throw error("unterminated string", at: quote)
        }

        mutating func parseHex4() throws(JSONParseError) -> UInt32 {
            guard index + 4 <= buffer.count else { throw error("unexpected end of input in \\u escape") }
            var value: UInt32 = 0
            for _ in 0..<4 {
                let byte = buffer[index]
                let digit: UInt32
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
                case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
                case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
                default: throw error("invalid hex digit in \\u escape")
                }
                value = value * 16 + digit
                index += 1
            }
            return value
        }

        func decodeUTF8(_ slice: UnsafeBufferPointer<UInt8>, at offset: Int) throws(JSONParseError) -> String {
            // Pure ASCII is the common case and needs no validation.
            var ascii = true
            for byte in slice where byte >= 0x80 {
                ascii = false
                break
            }
            if ascii { return String(decoding: slice, as: UTF8.self) }
            guard let string = String(validating: slice, as: UTF8.self) else {
                throw error("invalid UTF-8 in a string", at: offset)
            }
            return string
        }
    }
}
