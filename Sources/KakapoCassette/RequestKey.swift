import KakapoHTTP

/// What a request is looked up by: method, path, and the query as a multiset (order does not matter).
/// Values of secret query parameters are ignored, so a replay with a different token still matches.
public struct RequestKey: Hashable, Sendable {
    public let method: String
    public let path: String
    public let query: [QueryItem]

    public init(_ request: HTTPRequest, redactor: Redactor) {
        self.method = request.method.rawValue
        self.path = request.path
        self.query = request.queryItems.map { item in
            let name = item.name.removingPercentEncodingLeniently()
            let value =
                redactor.isSecretQueryParameter(name)
                ? Redactor.placeholder : item.value?.removingPercentEncodingLeniently()
            return QueryItem(name: name, value: value)
        }.sorted()
    }
}
