/// Why Kakapo's CA, a certificate or a key could not be created or read; the message names the file.
public struct TLSSetupError: Error, Sendable, CustomStringConvertible {
    public let message: String

    public init(_ message: String) { self.message = message }

    public var description: String { message }
}
