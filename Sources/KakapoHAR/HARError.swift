import KakapoJSON

/// A HAR file that cannot be read: the file, where in it (line and column when known), the key path
/// (`log.entries[3].response.status`) and what is wrong.
public struct HARError: Error, Sendable, CustomStringConvertible {
    public var file: String
    public var line: Int?
    public var column: Int?
    public let path: [JSONPathComponent]
    public let message: String

    public init(file: String, path: [JSONPathComponent], message: String, line: Int? = nil, column: Int? = nil) {
        self.file = file
        self.path = path
        self.message = message
        self.line = line
        self.column = column
    }

    public var description: String {
        var location = file
        if let line { location += ":\(line)" + (column.map { ":\($0)" } ?? "") }
        return path.isEmpty ? "\(location): \(message)" : "\(location): \(path.keyPath): \(message)"
    }
}
