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
    /// A recording made with `Range` (and `If-Range`) answers only the same range, and one made without
    /// answers only requests without (`--no-match-range` turns it off).
    public var matchRange = true
    /// A recorded `304 Not Modified` or `412 Precondition Failed` answers only the validators it was
    /// recorded for (`If-None-Match`, `If-Modified-Since`, `If-Match`, `If-Unmodified-Since`;
    /// `--no-match-conditional` turns it off).
    public var matchConditional = true
    /// The request headers a recorded response's `Vary` names are matched for that recording, and an
    /// encoded response answers only requests that accept its coding (`--ignore-vary` turns both off).
    public var matchVary = true
    /// Replayed dates move with the clock (`ReplayTime`), so the `Last-Modified` a client revalidates with is
    /// not the recorded one: a recorded `304` or `412` for an `If-Modified-Since` or `If-Unmodified-Since`
    /// date answers any date there (false with `--keep-time`: the date must be the recorded one).
    public var datesMoveWithClock = true
    /// A request whose only differences from a recording are values a client makes afresh (UUIDs, times of
    /// sending, long random nonces, on both sides) matches it (`RequestAlignment`; `--strict-values` turns it off).
    public var matchesByShape = true
    /// JSON body fields whose values must match as they are, whatever their shape (`--match-body-field`).
    public var exactBodyFields: [JSONPointer] = []

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
