import KakapoEngine
import NIOCore
import NIOHTTP1

/// What every client connection's HTTP handlers need, and how to put them in a channel pipeline: at the
/// start of a connection, and again inside a decrypted `CONNECT` tunnel.
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

    /// Adds the HTTP/1.1 server handlers at the end of the pipeline; requests read through them are
    /// addressed to `origin` (set inside a tunnel).
    func addHTTPHandlers(
        to pipeline: ChannelPipeline.SynchronousOperations, timeouts: ConnectionTimeoutHandler?, origin: String?,
        session: String? = nil
    ) throws {
        try pipeline.addHandler(RawTargetEscaper())
        try pipeline.configureHTTPServerPipeline(
            withPipeliningAssistance: true, withErrorHandling: false, withEncoderConfiguration: .init(),
            withDecoderLimitConfiguration: limits)
        try pipeline.addHandler(
            HTTPServerHandler(settings: self, timeouts: timeouts, origin: origin, session: session))
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
