import KakapoJSON

/// What verifying one recorded interaction against the live API found.
public struct Drift: Sendable {
    public enum Outcome: String, Sendable {
        case same
        case drift
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

    /// One line for people, then the details indented.
    public var text: String {
        ([("#\(position) \(method) \(target): \(outcome.rawValue)")] + details.map { "    " + $0 }).joined(
            separator: "\n")
    }

    public var json: JSONValue {
        [
            "interaction": .number(JSONNumber(position)), "method": .string(method), "url": .string(target),
            "result": .string(outcome.rawValue), "details": .array(details.map { .string($0) }),
        ]
    }
}
