/// A place in a file that Kakapo reads (a cassette, a routes file, a HAR file, an OpenAPI description),
/// written `file:line:column` with the parts that are unknown left out: `routes.json:14:17`,
/// `cassettes/api.json`, `3:9`.
///
/// Not called `SourceLocation`: Swift Testing has a type of that name, and a test that imports both would
/// have to spell one of them out.
public struct FileLocation: Hashable, Sendable, CustomStringConvertible {
    /// The file's path as the user gave it, when the text came from a file.
    public var file: String?
    /// The 1-based line, when known.
    public var line: Int?
    /// The 1-based column (counted in bytes), when known; written only after a line.
    public var column: Int?

    public init(file: String? = nil, line: Int? = nil, column: Int? = nil) {
        self.file = file
        self.line = line
        self.column = column
    }

    /// `file:line:column`, `file:line`, `file`, `line:column` or `line`; empty when nothing is known.
    public var description: String {
        var parts: [String] = []
        if let file, !file.isEmpty { parts.append(file) }
        if let line {
            parts.append(String(line))
            if let column { parts.append(String(column)) }
        }
        return parts.joined(separator: ":")
    }

    /// Whether nothing is known: no file, no line.
    public var isEmpty: Bool { description.isEmpty }
}
