extension HTTP {
    /// An HTTP request method such as `GET` or `POST`, kept exactly as the client spelled it.
    public struct Method: RawRepresentable, Hashable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
        public let rawValue: String

        public init(rawValue: String) { self.rawValue = rawValue }
        public init(_ rawValue: String) { self.rawValue = rawValue }
        public init(stringLiteral value: String) { self.rawValue = value }

        public var description: String { rawValue }

        public static let get: HTTP.Method = "GET"
        public static let head: HTTP.Method = "HEAD"
        public static let post: HTTP.Method = "POST"
        public static let put: HTTP.Method = "PUT"
        public static let patch: HTTP.Method = "PATCH"
        public static let delete: HTTP.Method = "DELETE"
        public static let options: HTTP.Method = "OPTIONS"
    }
}
