/// A syntax error in a JSON document, with the 1-based line and column where it was found.
public struct JSONParseError: Error, Hashable, Sendable, CustomStringConvertible {
    public let message: String
    public let line: Int
    public let column: Int
    /// The byte offset of the error in the input.
    public let offset: Int

    public init(message: String, line: Int, column: Int, offset: Int) {
        self.message = message
        self.line = line
        self.column = column
        self.offset = offset
    }

    /// `line:column: message`, ready to be prefixed with a file name.
    public var description: String { "\(line):\(column): \(message)" }
}

/// One step of a path into a JSON document: an object key or an array index.
public enum JSONPathComponent: Hashable, Sendable, CustomStringConvertible {
    case key(String)
    case index(Int)

    public var description: String {
        switch self {
        case .key(let key): return key
        case .index(let index): return String(index)
        }
    }
}

extension Array where Element == JSONPathComponent {
    /// The path as people write it: `routes[2].response.status`.
    public var keyPath: String {
        var text = ""
        for component in self {
            switch component {
            case .key(let key): text += text.isEmpty ? key : "." + key
            case .index(let index): text += "[\(index)]"
            }
        }
        return text
    }

    /// The path written as a JSON pointer (RFC 6901), for messages: `/interactions/3/response/status`.
    public var pointer: String {
        isEmpty
            ? ""
            : map {
                "/" + $0.description.replacingEvery("~", with: "~0").replacingEvery("/", with: "~1")
            }.joined()
    }
}
