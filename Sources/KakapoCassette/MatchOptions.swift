import KakapoGRPC
import KakapoJSON

/// What besides method and path decides whether a request matches a recording (design 5.3).
public struct MatchOptions: Hashable, Sendable {
    /// Query parameters whose presence and values are ignored.
    public var ignoredQueryParameters: Set<String>
    /// JSON body fields ignored when bodies are compared.
    public var ignoredBodyFields: [JSONPointer]
    /// Lowercased names of headers whose values must match too.
    public var matchedHeaders: [String]
    /// Compare bodies at all.
    public var matchBody: Bool
    /// The descriptor set of `--proto-descriptor`: gRPC messages are compared as JSON (`ignoredBodyFields` apply
    /// to each message) and written to the cassette as JSON. Nil compares them byte for byte.
    public var grpcSchema: GRPCSchema?

    public init(
        ignoredQueryParameters: Set<String> = [], ignoredBodyFields: [JSONPointer] = [], matchedHeaders: [String] = [],
        matchBody: Bool = true
    ) {
        self.ignoredQueryParameters = ignoredQueryParameters
        self.ignoredBodyFields = ignoredBodyFields
        self.matchedHeaders = matchedHeaders.map { $0.lowercased() }
        self.matchBody = matchBody
    }
}
