import KakapoEngine
import KakapoWebSocket
import NIOCore
import NIOHTTP1

/// A WebSocket upgrade tunnelled to the upstream: the request head goes there as received (`Host` set to
/// the upstream's), and from then on the upstream's answer (`101 Switching Protocols` or a refusal) and
/// every frame pass through untouched. With a recording plan, a `WebSocketTap` on each connection shows
/// the bytes to a `WebSocketRecorder`, which records the conversation when it ends. An unreachable upstream gets 502. With an upstream
/// proxy for the upstream's host, the connection is a `CONNECT` tunnel through it (for `ws://` too).
enum WebSocketTunnel {
    /// Whether a request asks to become a WebSocket (`Connection: Upgrade`, `Upgrade: websocket`).
    static func isUpgrade(_ head: HTTPRequestHead) -> Bool {
        head.headers[canonicalForm: "connection"].contains { $0.lowercased() == "upgrade" }
            && head.headers["upgrade"].contains { $0.lowercased() == "websocket" }
    }

    /// Opens the tunnel for the upgrade request `head` to `destination`, over TLS when it is secure (502
    /// when the server has no `ServerTLS.upstream`). The connection reads no more HTTP from now on.
    static func open(
        _ head: HTTPRequestHead, to destination: WebSocketDestination, recording: WebSocketRecordingPlan?,
        settings: HTTPConnectionSettings, errors: ErrorWriter, context: ChannelHandlerContext
    ) {
        let pipeline = settings.pipeline
        let tls = destination.secure ? settings.tls.upstream : nil
        guard !destination.secure || tls != nil else {
            errors.write(
                "WebSockets to \(destination.authority) over TLS need TLS support (KakapoTLS.UpstreamTLSClient as the server's ServerTLS.upstream)",
                status: .badGateway, version: head.version, headOnly: head.method == .HEAD, context: context)
            return
        }
        let channel = context.channel
        let logger = pipeline.logger
        let target = pipeline.loggable(head.uri)
        let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
        let upgrade = ByteBuffer(
            string: destination.head(
                method: head.method.rawValue, version: (head.version.major, head.version.minor),
                fields: head.headers.map { ($0.name, $0.value) }))
        let host = destination.host
        let proxy = pipeline.upstream?.proxies.proxy(scheme: destination.secure ? "https" : "http", host: host)
        TunnelHandler.connect(
            to: host, port: destination.port, timeout: pipeline.upstream?.configuration.connectTimeout ?? 10,
            through: proxy, tls: settings.tls.upstream, on: context.eventLoop
        )
        .flatMap { upstream in
            // To a wss:// upstream, TLS first: a failed handshake is answered 502 like a refused connection.
            guard let tls else { return upstream.eventLoop.makeSucceededFuture(upstream) }
            return tls.secure(upstream, host: host).map { upstream }.flatMapErrorThrowing { error in
                upstream.close(promise: nil)
                throw error
            }
        }
        .whenComplete { result in
            switch result {
            case .success(let upstream):
                do {
                    if let recording {
                        let recorder = WebSocketTunnel.recorder(
                            for: recording, described: "\(head.method) \(target)", pipeline: pipeline,
                            maximumMessageBytes: settings.maximumBodyBytes, loop: upstream.eventLoop)
                        try upstream.pipeline.syncOperations.addHandler(WebSocketTap(recorder: recorder, side: .server))
                        try TunnelHandler.splice(channel, with: upstream) {
                            try? channel.pipeline.syncOperations.addHandler(
                                WebSocketTap(recorder: recorder, side: .client))
                        }
                    } else {
                        try TunnelHandler.splice(channel, with: upstream)
                    }
                    upstream.writeAndFlush(upgrade, promise: nil)
                    logger.debug(
                        "\(head.method) \(target): WebSocket tunnelled to \(destination.authority), \(recording == nil ? "not recorded" : "recording")"
                    )
                } catch {
                    channel.close(promise: nil)
                    upstream.close(promise: nil)
                }
            case .failure(let error):
                errors.write(
                    "cannot open a WebSocket tunnel to \(destination.authority): \(error)", status: .badGateway,
                    version: head.version, headOnly: head.method == .HEAD, context: bound.value)
            }
        }
    }

    /// The recorder of one conversation, confined to `loop` (both connections'), registered so that Kakapo
    /// stopping records what was said so far before the cassette closes. A message is bounded by
    /// `maximumMessageBytes` (`--max-body-size`, as a request body is), the conversation by the upstream's
    /// maximum response size (it becomes one recorded answer).
    private static func recorder(
        for plan: WebSocketRecordingPlan, described: String, pipeline: RequestPipeline, maximumMessageBytes: Int,
        loop: any EventLoop
    ) -> WebSocketRecorder {
        let recorder = WebSocketRecorder(
            plan: plan, limit: pipeline.upstream?.configuration.maximumResponseBytes ?? 256 << 20,
            maximumMessageBytes: maximumMessageBytes, described: described, logger: pipeline.logger)
        let bound = NIOLoopBound(recorder, eventLoop: loop)
        let token = WebSocketRecordings.register(into: plan.session) {
            // Called off the event loops while Kakapo stops: waits until the recording is handed over.
            if loop.inEventLoop {
                bound.value.end(.stopping)
            } else {
                try? loop.submit { bound.value.end(.stopping) }.wait()
            }
        }
        recorder.onEnd = { WebSocketRecordings.unregister(token) }
        return recorder
    }
}
