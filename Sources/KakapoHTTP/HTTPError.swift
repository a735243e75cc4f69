/// An error that knows how it should reach a client: a status and a message, rendered by the proxy as
/// `{"error": message}`. Route handlers can throw `HTTPError` directly.
public protocol HTTPResponseError: Error {
    /// The status to answer with.
    var status: Int { get }
    /// What went wrong, for the client.
    var message: String { get }
}

/// A plain error with a status, for route handlers: `throw HTTPError(status: 403, message: "not yours")`.
public struct HTTPError: HTTPResponseError, Hashable, Sendable, CustomStringConvertible {
    public let status: Int
    public let message: String

    public init(status: Int, message: String) {
        self.status = status
        self.message = message
    }

    public var description: String { "\(status): \(message)" }
}
