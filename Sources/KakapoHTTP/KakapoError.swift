/// The shape every Kakapo error has, whatever module throws it: a stable `code`, a `message` that says what
/// happened (and what to do), where in a file it happened, and the error that caused it.
///
/// `description` is `location: message`, the form the CLI prints: `cassettes/api.json:14:7: expected ',' or '}'`.
/// A conforming type states `code` and `message`; `location` and `cause` default to nil.
public protocol KakapoError: Error, CustomStringConvertible {
    /// What kind of failure this is, for programs.
    var code: ErrorCode { get }
    /// What went wrong, for people; without the location.
    var message: String { get }
    /// The file, line and column the error is about, when it is about a place in a file.
    var location: FileLocation? { get }
    /// The lower-level error this one wraps (a parse error, an I/O error), when there is one.
    var cause: (any Error)? { get }
}

extension KakapoError {
    public var location: FileLocation? { nil }
    public var cause: (any Error)? { nil }

    public var description: String {
        guard let location, !location.isEmpty else { return message }
        return "\(location): \(message)"
    }
}
