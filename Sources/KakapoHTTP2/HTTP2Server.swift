import KakapoProxy
import NIOCore

#if canImport(NIOHTTP2)
    import NIOHTTP2
#endif

/// HTTP/2 for Kakapo's listener and decrypted tunnels (h2c with prior knowledge, h2 chosen by ALPN): give it
/// to `ProxyServer(configuration:tls:http2:)`. Each stream is served by KakapoProxy's HTTP handlers through
/// NIOHTTP2's `HTTP2FramePayloadToHTTP1ServerCodec`, so routes, cassettes, misses and the journal work as
/// for HTTP/1.1. Connections are bounded: 100 concurrent streams, the configured header size, 1 MiB flow
/// control windows per stream (4 MiB per connection), NIOHTTP2's defences against floods of resets and
/// control frames, a GOAWAY after the idle timeout with no open stream and a close at the latest the
/// grace period after it, and a reset for a stream whose answer makes no progress for the idle timeout.
public struct HTTP2Server: HTTP2Serving {
    /// Most streams a client may have open at once (SETTINGS_MAX_CONCURRENT_STREAMS).
    public var maximumConcurrentStreams: Int
    /// Each stream's receive window: what a client may send on a stream before Kakapo has read it.
    public var streamWindowBytes: Int

    public init(maximumConcurrentStreams: Int = 100, streamWindowBytes: Int = 1 << 20) {
        self.maximumConcurrentStreams = max(1, min(maximumConcurrentStreams, 1 << 16))
        self.streamWindowBytes = max(65_535, min(streamWindowBytes, Int(Int32.max)))
    }

    /// Whether this build speaks HTTP/2 (the package's `HTTP2` trait, on by default).
    public static var isAvailable: Bool {
        #if canImport(NIOHTTP2)
            true
        #else
            false
        #endif
    }

    public func configure(
        _ channel: any Channel, position: ChannelPipeline.SynchronousOperations.Position, limits: HTTP2Limits,
        stream: @escaping @Sendable (any Channel) -> EventLoopFuture<Void>
    ) throws {
        #if canImport(NIOHTTP2)
            let operations = channel.pipeline.syncOperations
            var connection = NIOHTTP2Handler.ConnectionConfiguration()
            connection.initialSettings = [
                HTTP2Setting(parameter: .maxConcurrentStreams, value: maximumConcurrentStreams),
                HTTP2Setting(parameter: .initialWindowSize, value: streamWindowBytes),
                HTTP2Setting(parameter: .maxFrameSize, value: 1 << 14),
                HTTP2Setting(parameter: .maxHeaderListSize, value: max(1024, min(limits.maximumHeaderBytes, 1 << 26))),
            ]
            connection.targetWindowSize = 4 * streamWindowBytes
            var streams = NIOHTTP2Handler.StreamConfiguration()
            streams.targetWindowSize = streamWindowBytes
            let management = NIOHTTP2ServerConnectionManagementHandler(
                eventLoop: channel.eventLoop,
                configuration: .init(
                    maxIdleTime: limits.idleTimeout, maxAge: nil, maxGraceTime: limits.gracePeriod, keepalive: nil))
            let http2 = NIOHTTP2Handler(
                mode: .server, eventLoop: channel.eventLoop, connectionConfiguration: connection,
                streamConfiguration: streams, streamDelegate: management.http2StreamDelegate
            ) { streamChannel in
                streamChannel.eventLoop.makeCompletedFuture {
                    let operations = streamChannel.pipeline.syncOperations
                    // Nothing is read (and so nothing answered) before NIOHTTP2 has told everyone of the stream.
                    try operations.addHandler(HTTP2StreamOpening())
                    try operations.addHandler(HTTP2StreamStall(limit: limits.idleTimeout))
                    try operations.addHandler(HTTP2StreamAbort())
                    try operations.addHandler(HTTP2RequestPseudoHeaders())
                    try operations.addHandler(HTTP2FramePayloadToHTTP1ServerCodec())
                }.flatMap { stream(streamChannel) }
            }
            // What arrives after a connection error is dropped before NIOHTTP2 can read it (HTTP2InboundGate).
            let gate = HTTP2InboundGate()
            try operations.addHandler(gate, position: position)
            try operations.addHandler(http2, position: .after(gate))
            // A client that never acknowledges the closing GOAWAY's PING is closed all the same.
            let closing = HTTP2ClosingDeadline(gracePeriod: limits.gracePeriod)
            try operations.addHandler(closing, position: .after(http2))
            // Idle connections and graceful closes: a GOAWAY first, so a client knows which streams were served.
            try operations.addHandler(management, position: .after(closing))
            // The HTTP/1.1 handlers after these leave on the next tick: nothing HTTP/2 reads may reach them.
            try operations.addHandler(HTTP2ConnectionEnd(gate: gate), position: .after(management))
            // The connection was active before these handlers came: the idle clock starts now.
            try operations.context(handler: http2).fireChannelActive()
        #else
            throw HTTP2Unavailable()
        #endif
    }
}

/// This build has no HTTP/2 (the package's `HTTP2` trait is off).
struct HTTP2Unavailable: Error, CustomStringConvertible {
    var description: String { "this build of Kakapo has no HTTP/2 (built without the HTTP2 trait)" }
}
