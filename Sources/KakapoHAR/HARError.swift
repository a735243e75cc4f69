import KakapoHTTP
import KakapoJSON

/// A HAR file that cannot be read: the file, where in it (line and column when known), the key path
/// (`log.entries[3].response.status`) and what is wrong.
public struct HARError: KakapoError, Sendable {
    /// `syntax` for a file that is not JSON, `invalid` for one that is not the HAR Kakapo reads.
    public let code: ErrorCode
    /// The file and, when known, the line and column.
    public var location: FileLocation?
    public let path: [JSONPathComponent]
    public let message: String
    public let cause: (any Error)?

    public init(
        file: String, path: [JSONPathComponent], message: String, line: Int? = nil, column: Int? = nil,
        code: ErrorCode = .invalid, cause: (any Error)? = nil
    ) {
        self.code = code
        self.location = FileLocation(file: file, line: line, column: column)
        self.path = path
        self.message = message
        self.cause = cause
    }

    /// The HAR file's path.
    public var file: String { location?.file ?? "" }
    /// The 1-based line, when known.
    public var line: Int? { location?.line }
    /// The 1-based column, when known.
    public var column: Int? { location?.column }

    public var description: String {
        let location = location?.description ?? ""
        return path.isEmpty ? "\(location): \(message)" : "\(location): \(path.keyPath): \(message)"
    }
}
