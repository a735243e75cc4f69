import KakapoGRPC
import KakapoGraphQL
import KakapoHTTP
import KakapoJSON

/// What names a request beyond its method and URL, in one-line messages (the miss line, the summary's miss
/// and unused lines): the GraphQL operation (`query GetUser`, `batch: query A, mutation B`), the JSON-RPC
/// method (`jsonrpc tools/call`, as `kakapo cassette show` says it) or `(gRPC)` for a gRPC call, whose
/// method is its path. Bounded: only a body up to `bodyLimit` bytes is parsed, and a label is cut at
/// `lengthLimit` characters, with no control character in it.
public enum RequestLabel {
    /// The largest body parsed for a label.
    public static let bodyLimit = 64 * 1024
    /// The most characters a label keeps; a longer one ends with `…`.
    public static let lengthLimit = 120

    /// The label of `request`; nil when it is none of the above (or its body is past `bodyLimit`).
    public static func of(_ request: HTTP.Request) -> String? {
        if GRPC.isGRPC(request) { return "(gRPC)" }
        guard request.body.count <= bodyLimit else { return nil }
        let label =
            GraphQLRequest(request, json: { try? JSONParser.parse(request.body) })?.label
            ?? JSONRPCMessage.label(for: request)
        return label.map(bounded)
    }

    /// ` LABEL` for a request that has one, else empty: what follows `METHOD url` in a line.
    public static func suffix(_ request: HTTP.Request) -> String { of(request).map { " " + $0 } ?? "" }

    /// `text` cut at `lengthLimit` characters, control characters shown as `?`.
    static func bounded(_ text: String) -> String {
        let shown = String(
            text.prefix(lengthLimit).map { character in
                character.unicodeScalars.contains { $0.properties.generalCategory == .control } ? "?" : character
            })
        return text.count > lengthLimit ? shown + "…" : shown
    }
}
