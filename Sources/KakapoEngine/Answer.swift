import KakapoCassette
import KakapoHTTP
import KakapoStubs
import KakapoUpstream

/// A response together with the layer that produced it, and how to deliver it.
public struct ProxyAnswer: Sendable {
    public var response: HTTP.Response
    public var source: ResponseSource
    /// How long the server waits before delivering (a route's latency); it never blocks a thread.
    public var delay: Duration = .zero
    /// Set when the connection is to fail instead of carrying `response` (a route's fault).
    public var fault: Fault.Kind?
    /// Set when the upstream failed and `response` is the 502 or 504 that says so.
    public var upstreamError: UpstreamError?
    /// The response already prepared for the wire (recorded answers), if any.
    var prepared: PreparedResponse?
    /// A recorded event stream: sent event by event (the body is their bytes joined).
    var chunks: [ResponseChunk]?
    /// An answer still streaming from the upstream (an event stream, a body of unknown or large size):
    /// `response` has its status and headers only.
    var live: LiveResponse?

    public init(response: HTTP.Response, source: ResponseSource) {
        self.response = response
        self.source = source
    }

    init(response: HTTP.Response, source: ResponseSource, prepared: PreparedResponse?) {
        self.response = response
        self.source = source
        self.prepared = prepared
    }

    /// What a declarative route decided. A failed connection is journaled with status 0.
    init(_ answer: StubAnswer) {
        self.init(response: answer.response ?? HTTP.Response(status: 0), source: .route)
        delay = answer.delay
        fault = answer.fault
    }
}
