import KakapoJSON

/// What checking one recorded interaction against an OpenAPI description found.
public struct SpecFinding: Sendable {
    /// The interaction's position in the cassette.
    public let position: Int
    public let method: String
    public let target: String
    public let status: Int
    /// The operation the request matched, such as `GET /users/{id}`; nil when the spec has none.
    public let operation: String?
    /// What the spec does not allow, one sentence each; empty when the interaction conforms.
    public let problems: [String]

    public init(position: Int, method: String, target: String, status: Int, operation: String?, problems: [String]) {
        self.position = position
        self.method = method
        self.target = target
        self.status = status
        self.operation = operation
        self.problems = problems
    }

    /// One line for people (`#2 GET /users/7 -> 200 (GET /users/{id})`), then the problems indented.
    public var text: String {
        let heading = "#\(position) \(method) \(target) -> \(status)\(operation.map { " (\($0))" } ?? "")"
        return ([heading] + problems.map { "    " + $0 }).joined(separator: "\n")
    }

    public var json: JSONValue {
        [
            "interaction": .number(JSONNumber(position)), "method": .string(method), "url": .string(target),
            "status": .number(JSONNumber(status)), "operation": operation.map(JSONValue.string) ?? .null,
            "problems": .array(problems.map { .string($0) }),
        ]
    }
}
