import KakapoHTTP

/// A proxy that cannot start or run as configured.
public struct ProxyError: KakapoError, Hashable, Sendable {
    /// `configuration` (the configuration is inconsistent: a mode that needs an upstream has none, and so
    /// on), `bind` (the address could not be bound) or `portInUse` (another program, or another Kakapo, has
    /// the port); the codes every module shares.
    public typealias Code = ErrorCode

    public let code: Code
    public let message: String

    public init(code: Code, message: String) {
        self.code = code
        self.message = message
    }
}
