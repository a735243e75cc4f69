import KakapoGraphQL
import KakapoJSON

/// One condition of a route's `when`: a query parameter, a header, a value in the JSON body, or the
/// GraphQL operation.
enum RequestCondition: Sendable {
    case query(String, ValueMatcher)
    case header(String, ValueMatcher)
    case json(JSONPointer, ValueMatcher)
    case graphQL(GraphQLCondition)

    /// Reads `{"query": {...}, "headers": {...}, "json": {"/pointer": ...}, "graphql": {...}}`.
    static func conditions(_ node: DefinitionNode) throws(RoutesError) -> [RequestCondition] {
        let object = try node.object(allowed: ["query", "headers", "json", "graphql"])
        var conditions: [RequestCondition] = []
        if let query = object["query"] {
            for (name, value) in try query.entries() {
                conditions.append(.query(name, try ValueMatcher(value)))
            }
        }
        if let headers = object["headers"] {
            for (name, value) in try headers.entries() {
                conditions.append(.header(name, try ValueMatcher(value)))
            }
        }
        if let json = object["json"] {
            for (text, value) in try json.entries() {
                guard let pointer = JSONPointer(text) else {
                    throw value.error("a JSON pointer starts with '/' (such as /user/name), not \"\(text)\"")
                }
                conditions.append(.json(pointer, try ValueMatcher(value)))
            }
        }
        if let graphQL = object["graphql"] {
            conditions.append(.graphQL(try GraphQLCondition(graphQL)))
        }
        return conditions
    }

    /// Where the condition looks, as a routes file spells it: `query.page`, `headers.X-Team`, `json./user/name`,
    /// `graphql`.
    var place: String {
        switch self {
        case .query(let name, _): return "query.\(name.prefix(64))"
        case .header(let name, _): return "headers.\(name.prefix(64))"
        case .json(let pointer, _): return "json.\(pointer.description.prefix(64))"
        case .graphQL: return "graphql"
        }
    }

    /// Whether the condition holds for the request; nil when a `matches` pattern could not judge its value
    /// within `ValueMatcher.stepBudget`.
    func holds(for context: TemplateContext) -> Bool? {
        switch self {
        case .query(let name, let matcher):
            return matcher.judge(text: context.query.first { $0.name == name }.map { $0.value ?? "" })
        case .header(let name, let matcher):
            return matcher.judge(text: context.request.headers[name])
        case .json(let pointer, let matcher):
            return matcher.judge(json: context.body?[pointer: pointer])
        case .graphQL(let condition):
            return condition.holds(for: GraphQLRequest(context.request, json: { context.body }))
        }
    }
}
