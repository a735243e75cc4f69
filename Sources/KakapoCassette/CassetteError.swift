import KakapoHTTP

/// A cassette that cannot be read, parsed, understood or written. The description names the file and,
/// where there is one, the line and column: `cassettes/api.json:14:7: expected ',' or '}'`.
public struct CassetteError: KakapoError, Hashable, Sendable {
    /// The kinds of failure: `unreadable`, `syntax`, `invalid`, `notWritable`, `locked` (shared by every module).
    public typealias Code = ErrorCode

    public let code: Code
    /// Where: the cassette's path and, when known, the line and column.
    public var location: FileLocation?
    public let message: String

    public init(code: Code, file: String, line: Int? = nil, column: Int? = nil, message: String) {
        self.code = code
        self.location = FileLocation(file: file, line: line, column: column)
        self.message = message
    }

    /// The cassette's path.
    public var file: String { location?.file ?? "" }
    /// The 1-based line, when known.
    public var line: Int? { location?.line }
    /// The 1-based column, when known.
    public var column: Int? { location?.column }
}
