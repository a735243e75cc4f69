/// Why an OpenAPI description could not be used: the file, and what is wrong with it.
public struct OpenAPISpecError: Error, CustomStringConvertible, Sendable {
    /// The spec's path.
    public let file: String
    /// What is wrong, with the line and column or key path where one is known.
    public let message: String

    public init(file: String, message: String) {
        self.file = file
        self.message = message
    }

    public var description: String { "\(file): \(message)" }
}
