import KakapoHTTP

/// What a streamed upstream answer (server-sent events) reports as it arrives, before the request's
/// completion: first the status and headers, then each piece of the body as libcurl delivers it.
public enum UpstreamStreamEvent: Sendable {
    /// The final status and headers (hop-by-hop fields dropped); the body is empty.
    case head(HTTPResponse)
    /// Body bytes, in order.
    case data([UInt8])
}
