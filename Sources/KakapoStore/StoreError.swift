import KakapoHTTP

/// A store operation that cannot be done. Reaching a client, it answers with `status`.
public struct StoreError: HTTPResponseError, Hashable, Sendable, CustomStringConvertible {
    /// What kind of failure this is; stable across releases.
    public struct Code: Hashable, Sendable {
        let name: String
        /// No entity of that type has that id (404).
        public static let notFound = Code(name: "not-found")
        /// An entity with that id is already stored (409).
        public static let conflict = Code(name: "conflict")
        /// A saved store could not be read or written.
        public static let file = Code(name: "file")
    }

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
    public var description: String { message }

    /// The error for a missing entity of type `T`.
    public static func notFound<T>(_ type: T.Type, id: String) -> StoreError {
        StoreError(code: .notFound, message: "no \(T.self) with id \"\(id)\"")
    }
}
