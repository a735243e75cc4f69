/// Why the shared store cannot be used: a bad URL, a database that cannot be reached, refused
/// credentials, or a schema this Kakapo does not know.
public struct SharedStoreError: Error, CustomStringConvertible, Sendable {
    public let message: String

    public init(_ message: String) {
        self.message = message
    }

    public var description: String { message }
}
