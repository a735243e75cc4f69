import Foundation

/// One entry point a fuzzer drives with arbitrary bytes: each parses or serves outside input the way
/// Kakapo does for real (a cassette file, a HAR file, a routes file, a template, a resource query, raw
/// bytes on a client connection). A run returns normally for every input; a crash, a hang or unbounded
/// memory is the finding.
///
/// The same entry points serve `tools/fuzz/run` (libFuzzer, `-sanitize=fuzzer`) and the test suite,
/// which replays every file of each corpus (`tools/fuzz/corpus/<name>/`) through them.
public enum FuzzTarget: String, CaseIterable, Sendable {
    /// A cassette file: `CassetteFile.decode`.
    case cassette
    /// A HAR file: `HARImport.cassette(from:file:)`.
    case har
    /// A routes file in JSON: `RoutesFile.load`.
    case routesJSON = "routes-json"
    /// A routes file in YAML: `RoutesFile.load`.
    case routesYAML = "routes-yaml"
    /// A response template (body and header) rendered for a request.
    case template
    /// The query of a list request to a Store resource (`?_page=...&title_like=...`).
    case query
    /// Raw bytes on a client connection to a running server.
    case request
    /// An XML answer, redacted (the element scanner of `Redactor+XML`).
    case xml
    /// A br, zstd, gzip or deflate body, decoded (the first byte picks the coding).
    case coded
    /// A binary answer, masked in place.
    case binary
    /// WebSocket frames after an upgrade, to a replayed conversation or through a recorder.
    case websocket
    /// HTTP/2 frames after the connection preface, on the listener.
    case http2
    /// A gRPC body: its framing, matching, and redaction without a descriptor set.
    case grpc
    /// A GraphQL document, read and matched.
    case graphql
    /// A JSON-RPC body, matched and answered with its ids spliced in.
    case jsonrpc
    /// A body to `POST /__kakapo/sessions`, and the session it opens.
    case session

    /// Starts what the entry point needs (the server of the served targets) ahead of the first input, so
    /// the time an input takes is its own.
    public func prepare() {
        switch self {
        case .template, .query, .request: ServedInputs.prepare()
        case .websocket, .http2, .grpc, .graphql, .jsonrpc, .session: ProtocolInputs.prepare()
        case .cassette, .har, .routesJSON, .routesYAML, .xml, .coded, .binary: break
        }
    }

    /// Feeds `bytes` to the entry point.
    public func run(_ bytes: [UInt8]) {
        switch self {
        case .cassette: FileInputs.cassette(bytes)
        case .har: FileInputs.har(bytes)
        case .routesJSON: FileInputs.routes(bytes, extension: "json")
        case .routesYAML: FileInputs.routes(bytes, extension: "yaml")
        case .template: ServedInputs.template(bytes)
        case .query: ServedInputs.query(bytes)
        case .request: ServedInputs.request(bytes)
        case .xml: BodyInputs.xml(bytes)
        case .coded: BodyInputs.coded(bytes)
        case .binary: BodyInputs.binary(bytes)
        case .websocket: ProtocolInputs.webSocket(bytes)
        case .http2: ProtocolInputs.http2(bytes)
        case .grpc: ProtocolInputs.grpc(bytes)
        case .graphql: ProtocolInputs.graphQL(bytes)
        case .jsonrpc: ProtocolInputs.jsonRPC(bytes)
        case .session: ProtocolInputs.session(bytes)
        }
    }
}
