/// Splits a GraphQL document into the tokens that count (GraphQL spec, section 2.1): names, numbers,
/// punctuators, strings and block strings, each with its line and column. Whitespace, commas, comments and a
/// byte order mark are skipped. One pass over the bytes, no recursion: its cost is linear in the document,
/// whatever it holds.
struct GraphQLTokenizer {
    /// What kind of token a token is; only what the operation scan needs to tell apart.
    enum Kind: Equatable {
        case name
        case punctuator
        case string
        case other
    }

    /// One token: where its bytes are and where it starts (1-based line and column, columns counted in
    /// Unicode scalars).
    struct Token {
        let kind: Kind
        let range: Range<Int>
        let line: Int
        let column: Int
    }

    /// A string or block string that never ends.
    struct UnterminatedString: Error {}

    let bytes: [UInt8]
    private var offset = 0
    private(set) var line = 1
    private(set) var column = 1

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    /// The next token, nil at the end of the document.
    mutating func next() throws(UnterminatedString) -> Token? {
        skipIgnored()
        guard offset < bytes.count else { return nil }
        let start = offset
        let (line, column) = (self.line, self.column)
        let byte = bytes[offset]
        let kind: Kind
        switch byte {
        case UInt8(ascii: "\""):
            if starts(with: #"""""#) {
                try skipBlockString()
            } else {
                try skipString()
            }
            kind = .string
        case UInt8(ascii: "."):
            advance(by: starts(with: "...") ? 3 : 1)
            kind = .punctuator
        case _ where Self.punctuators.contains(byte):
            advance(by: 1)
            kind = .punctuator
        case _ where Self.isNameStart(byte):
            while offset < bytes.count, Self.isNameStart(bytes[offset]) || Self.isDigit(bytes[offset]) {
                advance(by: 1)
            }
            kind = .name
        case _ where Self.isDigit(byte) || byte == UInt8(ascii: "-"):
            // A number as written (`-1`, `2.5e+3`); its exact spelling counts.
            advance(by: 1)
            var previous = byte
            while offset < bytes.count {
                let next = bytes[offset]
                let signAfterExponent =
                    (next == UInt8(ascii: "+") || next == UInt8(ascii: "-"))
                    && (previous == UInt8(ascii: "e") || previous == UInt8(ascii: "E"))
                guard Self.isDigit(next) || Self.isNameStart(next) || next == UInt8(ascii: ".") || signAfterExponent
                else { break }
                previous = next
                advance(by: 1)
            }
            kind = .other
        default:
            // Anything else is a token of one character: it counts, but ends nothing.
            advance(by: 1)
            while offset < bytes.count, bytes[offset] & 0xC0 == 0x80 { advance(by: 1) }
            kind = .other
        }
        return Token(kind: kind, range: start..<offset, line: line, column: column)
    }

    static let punctuators: Set<UInt8> = Set("!$&():=@[]{|}".utf8)

    static func isNameStart(_ byte: UInt8) -> Bool {
        (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z"))
            || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
            || byte == UInt8(ascii: "_")
    }

    static func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    private func starts(with text: StaticString) -> Bool {
        let count = text.utf8CodeUnitCount
        guard offset + count <= bytes.count else { return false }
        let prefix = UnsafeBufferPointer(start: text.utf8Start, count: count)
        return bytes[offset..<(offset + count)].elementsEqual(prefix)
    }

    /// Whitespace, line ends, commas, comments and the byte order mark.
    private mutating func skipIgnored() {
        while offset < bytes.count {
            switch bytes[offset] {
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: ","), UInt8(ascii: "\n"), UInt8(ascii: "\r"):
                advance(by: 1)
            case UInt8(ascii: "#"):
                while offset < bytes.count, bytes[offset] != UInt8(ascii: "\n"), bytes[offset] != UInt8(ascii: "\r") {
                    advance(by: 1)
                }
            case 0xEF where starts(with: "\u{FEFF}"):
                advance(by: 3)
            default:
                return
            }
        }
    }

    /// `"..."` with its escapes; it may not span lines.
    private mutating func skipString() throws(UnterminatedString) {
        advance(by: 1)
        while offset < bytes.count {
            switch bytes[offset] {
            case UInt8(ascii: "\""):
                advance(by: 1)
                return
            case UInt8(ascii: "\\"):
                advance(by: min(2, bytes.count - offset))
            case UInt8(ascii: "\n"), UInt8(ascii: "\r"):
                throw UnterminatedString()
            default:
                advance(by: 1)
            }
        }
        throw UnterminatedString()
    }

    /// `"""..."""`, where `\"""` does not end it.
    private mutating func skipBlockString() throws(UnterminatedString) {
        advance(by: 3)
        while offset < bytes.count {
            if starts(with: #"\""""#) {
                advance(by: 4)
            } else if starts(with: #"""""#) {
                advance(by: 3)
                return
            } else {
                advance(by: 1)
            }
        }
        throw UnterminatedString()
    }

    /// Moves on `count` bytes, counting lines (`\n`, `\r\n`, `\r`) and columns (one per Unicode scalar).
    private mutating func advance(by count: Int) {
        for _ in 0..<count {
            let byte = bytes[offset]
            offset += 1
            if byte == UInt8(ascii: "\n") {
                if offset < 2 || bytes[offset - 2] != UInt8(ascii: "\r") { line += 1 }
                column = 1
            } else if byte == UInt8(ascii: "\r") {
                line += 1
                column = 1
            } else if byte & 0xC0 != 0x80 {
                column += 1
            }
        }
    }
}
