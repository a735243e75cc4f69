import NIOCore

/// HTTP/2 for Kakapo's connections, kept out of this module (which builds no HTTP/2 library):
/// `KakapoHTTP2.HTTP2Server` provides it, and a `ProxyServer` given one answers HTTP/2 beside HTTP/1.1:
/// h2c with prior knowledge on the cleartext listener, h2 chosen by ALPN on the TLS listener and inside
/// decrypted `CONNECT` tunnels. Every stream is served by the same handlers as an HTTP/1.1 request.
public protocol HTTP2Serving: Sendable {
    /// Makes `channel` an HTTP/2 server connection: adds the HTTP/2 handlers at `position` in its pipeline,
    /// where they read the client's connection preface next (the HTTP/1.1 handlers after it may take a
    /// moment to leave, so not simply last). For each stream the client opens, `stream` adds the
    /// stream's request handlers to its channel once the HTTP/2 side has put a translation to NIOHTTP1's
    /// `HTTPServerRequestPart`/`HTTPServerResponsePart` there. Called on the channel's event loop.
    func configure(
        _ channel: any Channel, position: ChannelPipeline.SynchronousOperations.Position, limits: HTTP2Limits,
        stream: @escaping @Sendable (any Channel) -> EventLoopFuture<Void>
    ) throws
}

/// The bounds an HTTP/2 connection is held to, from the server's configuration.
public struct HTTP2Limits: Sendable {
    /// The largest header section a request may send (SETTINGS_MAX_HEADER_LIST_SIZE).
    public var maximumHeaderBytes: Int
    /// How long a connection may have no open stream before it is closed (GOAWAY, then close).
    public var idleTimeout: TimeAmount
    /// How long streams in flight may take to finish once the connection is closing.
    public var gracePeriod: TimeAmount

    public init(maximumHeaderBytes: Int, idleTimeout: TimeAmount, gracePeriod: TimeAmount) {
        self.maximumHeaderBytes = maximumHeaderBytes
        self.idleTimeout = idleTimeout
        self.gracePeriod = gracePeriod
    }
}
