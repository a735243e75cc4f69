/// A cassette that cannot be read, parsed, understood or written. The description names the file and,
/// where there is one, the line and column: `cassettes/api.json:14:7: expected ',' or '}'`.
public struct CassetteError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What kind of failure this is; stable across releases.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        let name: String
        public var description: String { name }

        /// The file could not be read (missing, unreadable).
        public static let unreadable = Code(name: "unreadable")
        /// The file is not valid JSON.
        public static let syntax = Code(name: "syntax")
        /// The file is JSON but not a cassette this version understands.
        public static let invalid = Code(name: "invalid")
        /// The file could not be written.
        public static let notWritable = Code(name: "notWritable")
        /// Another writer (a recording, a `kakapo cassette` command) holds the cassette's lock.
        public static let locked = Code(name: "locked")
    }

    public let code: Code
    public let file: String
    public let line: Int?
    public let column: Int?
    public let message: String

    public init(code: Code, file: String, line: Int? = nil, column: Int? = nil, message: String) {
        self.code = code
        self.file = file
        self.line = line
        self.column = column
        self.message = message
    }

    public var description: String {
        var location = file
        if let line {
            location += ":\(line)"
            if let column { location += ":\(column)" }
        }
        return "\(location): \(message)"
    }
}
