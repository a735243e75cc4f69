import KakapoHTTP
import KakapoJSON

/// A routes definition that cannot be used: where it is (file, line, column, and the key path inside
/// the document) and what is wrong with it.
///
/// `routes.json:14:17: routes[2].response.status: expected an integer from 100 to 599`
public struct RoutesError: KakapoError, Hashable, Sendable {
    /// `invalid` for a value that is wrong, `syntax` for a document that does not parse, `unreadable`
    /// for a file that cannot be read.
    public var code: ErrorCode
    /// The file the definition came from, and the line and column of the offending value, when known.
    public var location: FileLocation?
    /// Where in the document the problem is: `routes`, `2`, `response`, `status`.
    public let path: [JSONPathComponent]
    public let message: String

    public init(
        path: [JSONPathComponent], message: String, file: String? = nil, line: Int? = nil, column: Int? = nil,
        code: ErrorCode = .invalid
    ) {
        self.code = code
        self.path = path
        self.message = message
        let location = FileLocation(file: file, line: line, column: column)
        self.location = location.isEmpty ? nil : location
    }

    /// The file the definition came from, when it came from one.
    public var file: String? {
        get { location?.file }
        set { location = FileLocation(file: newValue, line: line, column: column) }
    }
    /// The 1-based line of the offending value, when known.
    public var line: Int? {
        get { location?.line }
        set { location = FileLocation(file: file, line: newValue, column: column) }
    }
    /// The 1-based column of the offending value, when known.
    public var column: Int? {
        get { location?.column }
        set { location = FileLocation(file: file, line: line, column: newValue) }
    }

    /// The key path as people write it: `routes[2].response.status`.
    public var keyPath: String { path.keyPath }

    public var description: String {
        let prefix = [location?.description ?? "", keyPath].filter { !$0.isEmpty }.joined(separator: ": ")
        return prefix.isEmpty ? message : prefix + ": " + message
    }
}
