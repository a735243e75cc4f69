import KakapoGraphQL
import KakapoHTTP

/// What a request is looked up by: method, path, the query as a multiset (order does not matter), and
/// the values of the headers the user asked to match. Escapes are compared as RFC 3986 section 6.2.2 says:
/// the path in `percentEncodingNormalized()` form (`%c3%a9`, `%C3%A9` and raw `é` are one key, `%7E` is
/// `~`, `%2F` is not `/`), query names and values decoded. Ignored query parameters are left out; values of
/// secret query parameters and headers are ignored, so a replay with a different token still matches.
/// A GraphQL operation sent as a GET or as `application/graphql` leaves its `query`, `operationName` and
/// `variables` parameters out: they are compared as the operation (`ComparableBody.graphQL`), whatever the
/// whitespace of the document (unless bodies are not compared at all, when they stay parameters).
public struct RequestKey: Hashable, Sendable {
    public let method: String
    public let path: String
    public let query: [QueryItem]
    public let headers: [String]

    init(method: String, path: String, query: [QueryItem], headers: [String]) {
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
    }

    /// The key of `request`; `alsoSecret` names more query parameters whose values are ignored.
    public init(
        _ request: HTTP.Request, redactor: Redactor, matching: MatchOptions = MatchOptions(),
        alsoSecret: Set<String> = []
    ) {
        self.init(
            request, redactor: redactor, matching: matching, alsoSecret: alsoSecret,
            graphQLInParameters: GraphQLRequest(outsideJSONBody: request) != nil)
    }

    /// The key of `request` when the caller already knows whether its parameters carry a GraphQL operation.
    init(
        _ request: HTTP.Request, redactor: Redactor, matching: MatchOptions, alsoSecret: Set<String>,
        graphQLInParameters: Bool
    ) {
        self.method = request.method.rawValue
        // Once per request and per recording; no allocation for a path without `%` or non-ASCII bytes.
        self.path = request.path.percentEncodingNormalized()
        self.query = request.queryItems.compactMap { item in
            let name = item.name.removingPercentEncodingLeniently()
            if matching.ignoredQueryParameters.contains(name) { return nil }
            // With bodies not compared, the operation is not either: its parameters stay in the key.
            if graphQLInParameters, matching.matchBody, GraphQLRequest.parameterNames.contains(name) { return nil }
            let value =
                redactor.isSecretQueryParameter(name) || alsoSecret.contains(name)
                ? Redactor.placeholder : item.value?.removingPercentEncodingLeniently()
            return QueryItem(name: name, value: value)
        }.sorted()
        self.headers = matching.matchedHeaders.map { name in
            redactor.isSecretHeader(name) ? "" : request.headers.values(for: name).joined(separator: ", ")
        }
    }
}

extension RequestKey {
    /// `METHOD /path` (the path in `percentEncodingNormalized()` form): what recordings are grouped by for
    /// matching by shape.
    static func loose(_ request: HTTP.Request) -> String {
        request.method.rawValue + " " + request.path.percentEncodingNormalized()
    }
}
