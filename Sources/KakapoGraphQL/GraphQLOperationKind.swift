/// The kind of a GraphQL operation, the keyword its definition starts with (`{ ... }` alone is a query).
public enum GraphQLOperationKind: String, Sendable {
    /// Reads data: `query`.
    case query
    /// Changes data: `mutation`.
    case mutation
    /// Asks for a stream of results: `subscription`.
    case subscription
}
