import KakapoHTTP

/// What a streamed upstream answer reports as it arrives, before the request's completion: first the
/// status and headers, then each piece of the body as libcurl delivers it. Server-sent events stream, and
/// so does every body of unknown or large size (see `UpstreamConfiguration.streamingThreshold`).
public enum UpstreamStreamEvent: Sendable {
    /// The final status and headers (hop-by-hop fields dropped; the body is empty), and what continues
    /// the transfer after a pause.
    case head(HTTP.Response, TransferResumer)
    /// Body bytes, in order.
    case data([UInt8])
    /// The body outgrew `maximumResponseBytes`: it goes on streaming, but the completion's response no
    /// longer holds it (so it cannot be recorded).
    case tooLargeToKeep
}

/// Whether a streamed transfer goes on: a listener answers `.stop` when nobody wants the rest (the client
/// went away), and libcurl then abandons the transfer; `.pause` when it cannot take these bytes yet (its
/// client is behind): the transfer waits, without holding a thread, until the `TransferResumer` of its
/// head is called, and the same bytes are then delivered again.
public enum StreamDisposition: Sendable {
    case proceed
    case stop
    case pause
}

/// Continues a paused transfer (see `StreamDisposition.pause`); may be called from any thread.
public final class TransferResumer: Sendable {
    private let action: @Sendable () -> Void

    /// A resumer that runs `action`; the engine makes its own for streams it feeds itself (the inspector's).
    package init(_ action: @escaping @Sendable () -> Void) { self.action = action }

    public func resume() { action() }
}
