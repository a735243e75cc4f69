import KakapoHTTP

/// Why an OpenAPI description could not be used: the file (with a line and column where one is known),
/// and what is wrong with it.
public struct OpenAPISpecError: KakapoError, Sendable {
    /// `unreadable`, `syntax` (not JSON or YAML) or `invalid` (not an OpenAPI 3 document Kakapo reads).
    public let code: ErrorCode
    /// The spec's path and, for a syntax error Kakapo's JSON parser found, the line and column.
    public let location: FileLocation?
    /// What is wrong, with the key path where one is known.
    public let message: String
    public let cause: (any Error)?

    public init(
        file: String, message: String, line: Int? = nil, column: Int? = nil, code: ErrorCode = .invalid,
        cause: (any Error)? = nil
    ) {
        self.code = code
        self.location = FileLocation(file: file, line: line, column: column)
        self.message = message
        self.cause = cause
    }

    /// The spec's path.
    public var file: String { location?.file ?? "" }
}
