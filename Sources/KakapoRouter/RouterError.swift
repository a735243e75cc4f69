import KakapoHTTP

/// A route that cannot be registered or a request a handler cannot read.
public struct RouterError: HTTPResponseError, Hashable, Sendable, CustomStringConvertible {
    /// What kind of failure this is; stable across releases.
    public struct Code: Hashable, Sendable {
        let name: String
        public static let invalidPattern = Code(name: "invalid-pattern")
        public static let conflict = Code(name: "conflict")
        public static let missingParameter = Code(name: "missing-parameter")
        public static let invalidBody = Code(name: "invalid-body")
        public static let invalidBaseURL = Code(name: "invalid-base-url")
    }

    public let code: Code
    public let message: String

    public init(code: Code, message: String) {
        self.code = code
        self.message = message
    }

    /// A body a handler could not decode is the client's fault (400); the rest are the server's (500).
    public var status: Int { code == .invalidBody ? 400 : 500 }

    public var description: String { message }

    static func invalidPattern(_ pattern: String, _ reason: String) -> RouterError {
        RouterError(code: .invalidPattern, message: "invalid route pattern \"\(pattern)\": \(reason)")
    }
}
