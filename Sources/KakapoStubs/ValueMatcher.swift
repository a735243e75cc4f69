import KakapoJSON

/// How a `when` condition judges one value: equal to a value, matching a regular expression (the whole
/// value), or present / absent. Patterns run on `LinearRegex`: they are matched against request data on
/// the event loop, so matching must take time linear in the value, whatever the pattern.
enum ValueMatcher: Sendable {
    case equals(JSONValue)
    case matches(LinearRegex)
    case present(Bool)

    /// The most `LinearRegex` steps one value may cost: a value the pattern cannot judge within it (a
    /// large pattern over megabytes of body) is not judged (`judge` gives nil): the route answers 400
    /// saying so rather than hold the event loop, or pass the request on without a word.
    static let stepBudget = 1_000_000

    /// Reads `"value"`, `{"matches": "regex"}` or `{"present": true}`.
    init(_ node: DefinitionNode) throws(RoutesError) {
        guard case .object(let members) = node.value, members.count == 1,
            let key = members.keys.first, key == "matches" || key == "present"
        else {
            self = .equals(node.value)
            return
        }
        let object = try node.object(allowed: ["matches", "present"])
        if let present = object["present"] {
            self = .present(try present.bool())
            return
        }
        let pattern = try object["matches"]!.string()
        do {
            self = .matches(try LinearRegex(pattern, wholeValue: true))
        } catch {
            throw object["matches"]!.error("not a valid regular expression: \(pattern) (\(error.message))")
        }
    }

    /// Judges a text value (a query parameter or a header); nil means absent. A pattern that cannot judge
    /// the value within `stepBudget` does not accept it.
    func accepts(text: String?) -> Bool {
        judge(text: text) ?? false
    }

    /// Judges a JSON value from the body as `accepts(json:)` does.
    func accepts(json: JSONValue?) -> Bool {
        judge(json: json) ?? false
    }

    /// Whether the value is accepted, or nil when the pattern could not judge it within `stepBudget`.
    func judge(text: String?) -> Bool? {
        switch self {
        case .present(let wanted): return (text != nil) == wanted
        case .equals(let expected):
            guard let text else { return false }
            switch expected {
            case .string(let value): return text == value
            case .number(let number): return text == number.literal
            case .bool(let flag): return text == (flag ? "true" : "false")
            default: return false
            }
        case .matches(let regex):
            guard let text else { return false }
            var budget = ValueMatcher.stepBudget
            return regex.matches(text, budget: &budget)
        }
    }

    /// Judges a JSON value from the body; nil means absent. Equality is JSON equality (key order and
    /// number spelling do not count); a regular expression sees strings as they are and numbers as written.
    /// Nil when a pattern could not judge it within `stepBudget`.
    func judge(json: JSONValue?) -> Bool? {
        switch self {
        case .equals(let expected):
            guard let json else { return false }
            return json.isEquivalent(to: expected)
        case .matches:
            switch json {
            case .string(let text)?: return judge(text: text)
            case .number(let number)?: return judge(text: number.literal)
            case .bool(let flag)?: return judge(text: flag ? "true" : "false")
            default: return false
            }
        case .present(let wanted):
            return (json != nil) == wanted
        }
    }
}
