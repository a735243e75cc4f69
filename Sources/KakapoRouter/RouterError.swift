import KakapoHTTP

/// A route that cannot be registered or a request a handler cannot read.
public struct RouterError: KakapoError, HTTPResponseError, Hashable, Sendable {
    /// What kind of failure this is (`invalidPattern`, `conflict`, `missingParameter`, `invalidBody`,
    /// `invalidBaseURL`); stable across releases.
    public typealias Code = ErrorCode

    public let code: Code
    public let message: String

    public init(code: Code, message: String) {
        self.code = code
        self.message = message
    }

    /// A body a handler could not decode is the client's fault (400); the rest are the server's (500).
    public var status: Int { code == .invalidBody ? 400 : 500 }

    static func invalidPattern(_ pattern: String, _ reason: String) -> RouterError {
        RouterError(code: .invalidPattern, message: "invalid route pattern \"\(pattern)\": \(reason)")
    }
}

extension ErrorCode {
    /// A route pattern that cannot be read.
    public static let invalidPattern = ErrorCode(name: "invalid-pattern")
    /// A path parameter the handler asked for is not in the route.
    public static let missingParameter = ErrorCode(name: "missing-parameter")
    /// A request body the handler could not decode.
    public static let invalidBody = ErrorCode(name: "invalid-body")
    /// A router's base URL that cannot be read.
    public static let invalidBaseURL = ErrorCode(name: "invalid-base-url")
}
