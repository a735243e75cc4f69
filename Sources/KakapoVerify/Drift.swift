import KakapoJSON

/// What verifying one recorded interaction against the live API found.
public struct Drift: Sendable {
    public enum Outcome: String, Sendable {
        /// Nothing changed but values marked (or known) to change on every call.
        case same
        /// Changes a client should survive (volatile-looking values not marked, added members, header order).
        case benign
        /// Changes a client may break on (status, media type, a member removed, a type, an enum value).
        case changed
        case skipped
        case failed
    }

    /// The interaction's position in the cassette.
    public let position: Int
    public let method: String
    public let target: String
    public let outcome: Outcome
    /// What changed (`status: 200 recorded, 404 now`), why it was skipped, or why it failed.
    public let details: [String]

    /// One line for people, then the details indented, except a benign recording's (`--format json` has them).
    public var text: String {
        let shown = outcome == .benign ? [] : details
        return ([("#\(position) \(method) \(target): \(outcome.rawValue)")] + shown.map { "    " + $0 }).joined(
            separator: "\n")
    }

    public var json: JSONValue {
        [
            "interaction": .number(JSONNumber(position)), "method": .string(method), "url": .string(target),
            "result": .string(outcome.rawValue), "details": .array(details.map { .string($0) }),
        ]
    }
}
