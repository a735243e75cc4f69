import KakapoJSON

/// A routes definition that cannot be used: where it is (file, line, column, and the key path inside
/// the document) and what is wrong with it.
///
/// `routes.json:14:17: routes[2].response.status: expected an integer from 100 to 599`
public struct RoutesError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The file the definition came from, when it came from one.
    public var file: String?
    /// 1-based line and column of the offending value, when known.
    public var line: Int?
    public var column: Int?
    /// Where in the document the problem is: `routes`, `2`, `response`, `status`.
    public let path: [JSONPathComponent]
    public let message: String

    public init(
        path: [JSONPathComponent], message: String, file: String? = nil, line: Int? = nil, column: Int? = nil
    ) {
        self.path = path
        self.message = message
        self.file = file
        self.line = line
        self.column = column
    }

    /// The key path as people write it: `routes[2].response.status`.
    public var keyPath: String { path.keyPath }

    public var description: String {
        var location = file ?? ""
        if let line {
            location += (location.isEmpty ? "" : ":") + "\(line)"
            if let column { location += ":\(column)" }
        }
        let prefix = [location, keyPath].filter { !$0.isEmpty }.joined(separator: ": ")
        return prefix.isEmpty ? message : prefix + ": " + message
    }
}
