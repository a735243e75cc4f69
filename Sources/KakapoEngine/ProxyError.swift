/// A proxy that cannot start or run as configured.
public struct ProxyError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What kind of failure this is; stable across releases.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        let name: String
        public var description: String { name }

        /// The configuration is inconsistent (a mode that needs an upstream has none, and so on).
        public static let configuration = Code(name: "configuration")
        /// The address could not be bound.
        public static let bind = Code(name: "bind")
        /// The port is taken by another program (or another Kakapo).
        public static let portInUse = Code(name: "port-in-use")
    }

    public let code: Code
    public let message: String

    public init(code: Code, message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }
}
