import KakapoHTTP

/// A store operation that cannot be done. Reaching a client, it answers with `status`.
public struct StoreError: KakapoError, HTTPResponseError, Hashable, Sendable {
    /// What kind of failure this is (`notFound`, `conflict`, `file`); stable across releases.
    public typealias Code = ErrorCode

    public let code: Code
    public let message: String

    public init(code: Code, message: String) {
        self.code = code
        self.message = message
    }

    public var status: Int {
        switch code {
        case .notFound: return 404
        case .conflict: return 409
        default: return 500
        }
    }

    /// The error for a missing entity of type `T`.
    public static func notFound<T>(_ type: T.Type, id: String) -> StoreError {
        StoreError(code: .notFound, message: "no \(T.self) with id \"\(id)\"")
    }
}

extension ErrorCode {
    /// A saved store could not be read or written.
    public static let file = ErrorCode(name: "file")
}
