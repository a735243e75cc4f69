import KakapoGraphQL
import KakapoJSON

/// A route's `when: {graphql: {...}}`: the request is a GraphQL operation (in any form: JSON POST,
/// `application/graphql`, GET) whose name, kind, document and variables meet these matchers. Each value is
/// exact or `{matches: REGEX}` / `{present: true}` as in the other conditions; `query` compares the
/// normalised document (whitespace, commas and comments do not count). A batch meets the condition when
/// every operation in it does.
///
/// ```yaml
/// when: {graphql: {operationName: GetUser, variables: {"/id": "1"}}}
/// ```
struct GraphQLCondition: Sendable {
    let operationName: ValueMatcher?
    let operationType: ValueMatcher?
    let query: ValueMatcher?
    let variables: [(JSONPointer, ValueMatcher)]

    static let keys = ["operationName", "operationType", "query", "variables"]

    /// Reads `{"operationName": ..., "operationType": ..., "query": ..., "variables": {"/pointer": ...}}`.
    init(_ node: DefinitionNode) throws(RoutesError) {
        let object = try node.object(allowed: Self.keys)
        operationName = try object["operationName"].map { (node) throws(RoutesError) in try ValueMatcher(node) }
        if let type = object["operationType"] {
            let matcher = try ValueMatcher(type)
            if case .equals(let value) = matcher, GraphQLOperationKind(rawValue: value.stringValue ?? "") == nil {
                throw type.error("expected query, mutation or subscription")
            }
            operationType = matcher
        } else {
            operationType = nil
        }
        if let query = object["query"] {
            let matcher = try ValueMatcher(query)
            if case .equals(let value) = matcher {
                // Compared normalised, so the route's layout of the document does not matter.
                guard case .string(let text) = value, let document = GraphQLDocument(text) else {
                    throw query.error("expected a GraphQL document, such as \"query GetUser { user { id } }\"")
                }
                self.query = .equals(.string(document.normalized))
            } else {
                self.query = matcher
            }
        } else {
            query = nil
        }
        var variables: [(JSONPointer, ValueMatcher)] = []
        for (text, value) in try object["variables"]?.entries() ?? [] {
            guard let pointer = JSONPointer(text) else {
                throw value.error("a JSON pointer starts with '/' (such as /id or /input/name), not \"\(text)\"")
            }
            variables.append((pointer, try ValueMatcher(value)))
        }
        self.variables = variables
    }

    /// Whether `request` (nil when the request is no GraphQL operation) meets the condition; nil when a
    /// pattern could not judge a value within `ValueMatcher.stepBudget`.
    func holds(for request: GraphQLRequest?) -> Bool? {
        guard let request else { return false }
        for operation in request.operations {
            guard let held = holds(for: operation) else { return nil }
            if !held { return false }
        }
        return true
    }

    private func holds(for operation: GraphQLOperation) -> Bool? {
        var judgements: [() -> Bool?] = []
        if let operationName { judgements.append { operationName.judge(text: operation.name) } }
        if let operationType { judgements.append { operationType.judge(text: operation.kind?.rawValue) } }
        if let query { judgements.append { query.judge(text: operation.document.normalized) } }
        let values = operation.variables ?? .object(JSONObject())
        for (pointer, matcher) in variables { judgements.append { matcher.judge(json: values[pointer: pointer]) } }
        for judgement in judgements {
            guard let held = judgement() else { return nil }
            if !held { return false }
        }
        return true
    }
}
