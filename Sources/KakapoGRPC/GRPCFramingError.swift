/// A gRPC body that is not a sequence of whole length-prefixed messages; says what and where.
public struct GRPCFramingError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What is wrong, and at which byte: "message 2 (at byte 17) announces 4294967295 bytes; 3 follow".
    public let message: String

    public init(_ message: String) { self.message = message }

    public var description: String { message }
}
