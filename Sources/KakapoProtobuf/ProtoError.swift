/// Why a descriptor set or a message could not be read, or JSON could not be turned into a message. The
/// message says what and where: "field 3 of pkg.Msg: a varint longer than 10 bytes".
public struct ProtoError: Error, Sendable, CustomStringConvertible {
    /// What went wrong and where.
    public let message: String
    /// True once the message names the field it happened in, so outer fields do not name theirs too.
    let isLocated: Bool

    /// An error with `message` as its text.
    public init(_ message: String) {
        self.message = message
        self.isLocated = false
    }

    init(_ message: String, isLocated: Bool) {
        self.message = message
        self.isLocated = isLocated
    }

    /// The message.
    public var description: String { message }
}
