import KakapoEngine
import NIOCore
import NIOHTTP1

/// What every client connection's HTTP handlers need, and how to put them in a channel pipeline: at the
/// start of a connection, again inside a decrypted `CONNECT` tunnel, and on each HTTP/2 stream.
struct HTTPConnectionSettings: Sendable {
    let pipeline: RequestPipeline
    let tracker: InFlightTracker
    let maximumBodyBytes: Int
    let limits: NIOHTTPDecoderLimitConfiguration
    let forward: ForwardProxyConfiguration?
    let tls: ServerTLS
    /// Recorded answers prepared for the wire.
    let replies: PreparedReplies
    /// What all connections' buffered request bodies may hold together.
    let bodyBudget: BodyBudget
    /// HTTP/2 beside HTTP/1.1, or nil for HTTP/1.1 only.
    var http2: (any HTTP2Serving)? = nil
    /// How long a connection (or an HTTP/2 stream) may send nothing.
    var idleTimeout: TimeAmount = .seconds(60)
    /// How long a request may take to arrive once it started.
    var requestDeadline: TimeAmount = .seconds(60)
    /// How long an HTTP/2 connection's streams may take to finish once it closes.
    var gracePeriod: TimeAmount = .seconds(10)
    /// Says requests in flight with no bytes either way for a while (`--slow-warning`); nil says nothing.
    var watch: SlowRequestWatch? = nil
    /// gRPC calls that keep their request open while they wait for answers, answered UNIMPLEMENTED.
    var openCalls = OpenGRPCCalls()
    /// True on the admin listener (`ProxyConfiguration.adminPort`): only `/__kakapo/*` is answered there,
    /// and pages of its own origin may use it.
    var adminListener = false

    /// Adds the HTTP server handlers at the end of the pipeline: HTTP/1.1's, behind a sniffer that hands a
    /// connection starting with HTTP/2's preface to `http2` instead. Requests read through them are
    /// addressed to `origin` (set inside a tunnel).
    func addHTTPHandlers(
        to pipeline: ChannelPipeline.SynchronousOperations, timeouts: ConnectionTimeoutHandler?, origin: String?,
        session: String? = nil
    ) throws {
        let startHTTP2: ((ChannelHandlerContext) throws -> Void)? =
            http2.map { http2 in
                { context in
                    try self.startHTTP2(
                        http2, on: context.channel, position: .after(context.handler), origin: origin, session: session)
                }
            }
        try pipeline.addHandler(HTTP2PrefaceSniffer(startHTTP2: startHTTP2))
        try pipeline.addHandler(RawTargetEscaper())
        try pipeline.configureHTTPServerPipeline(
            withPipeliningAssistance: true, withErrorHandling: false, withEncoderConfiguration: .init(),
            withDecoderLimitConfiguration: limits)
        try pipeline.addHandler(
            HTTPServerHandler(settings: self, timeouts: timeouts, origin: origin, session: session))
    }

    /// Turns a connection whose HTTP/1.1 handlers have read nothing yet into an HTTP/2 one. Each stream gets
    /// its own `HTTPServerHandler` for `origin` and `session`, and its own timeouts: the connection's would
    /// close a healthy HTTP/2 connection (its control frames are reads that no request ends), so they go,
    /// and the HTTP/2 side closes a connection that has had no stream for the idle timeout.
    private func startHTTP2(
        _ http2: any HTTP2Serving, on channel: any Channel, position: ChannelPipeline.SynchronousOperations.Position,
        origin: String?,
        session: String?
    ) throws {
        let operations = channel.pipeline.syncOperations
        Self.removeHTTPHandlers(from: operations)
        if let timeouts = try? operations.handler(type: ConnectionTimeoutHandler.self) {
            operations.removeHandler(timeouts, promise: nil)
        }
        let http2Limits = HTTP2Limits(
            maximumHeaderBytes: limits.maxHeaderListSize, idleTimeout: idleTimeout, gracePeriod: gracePeriod)
        try http2.configure(channel, position: position, limits: http2Limits) { stream in
            stream.eventLoop.makeCompletedFuture {
                let operations = stream.pipeline.syncOperations
                let timeouts = ConnectionTimeoutHandler(idleTimeout: idleTimeout, requestDeadline: requestDeadline)
                try operations.addHandler(timeouts)
                try operations.addHandler(
                    HTTPServerHandler(
                        settings: self, timeouts: timeouts, origin: origin, session: session, http2Stream: true))
            }
        }
    }

    /// Takes out every handler `addHTTPHandlers` added, so the connection carries raw bytes again.
    static func removeHTTPHandlers(from pipeline: ChannelPipeline.SynchronousOperations) {
        func remove<Handler: RemovableChannelHandler>(_ type: Handler.Type) {
            if let context = try? pipeline.context(handlerType: type) {
                pipeline.removeHandler(context: context, promise: nil)
            }
        }
        remove(HTTPServerHandler.self)
        remove(HTTPServerPipelineHandler.self)
        remove(NIOHTTPResponseHeadersValidator.self)
        remove(HTTPResponseEncoder.self)
        remove(ByteToMessageHandler<HTTPRequestDecoder>.self)
        remove(RawTargetEscaper.self)
    }
}
