import KakapoEngine
import KakapoHTTP
import KakapoJSON
import KakapoStubs
import KakapoUpstream
import NIOCore
import NIOHTTP1
import NIOPosix

#if canImport(Glibc)
    import Glibc
#else
    import Darwin
#endif

/// Reads one HTTP/1.1 request at a time from a connection, hands it to the pipeline, and writes the answer
/// with a correct `Content-Length`. Request bodies over the limit get 413 and the connection is closed.
/// Runs on the channel's event loop; the pipeline's answer hops back onto it.
///
/// As a forward proxy it also reads absolute-form targets (`GET http://host/path`) and `CONNECT
/// host:port`, which turns the connection into a decrypted tunnel (new HTTP handlers behind a TLS
/// handler, their requests addressed to that host) or a blind one.
final class HTTPServerHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let settings: HTTPConnectionSettings
    private let pipeline: RequestPipeline
    private let tracker: InFlightTracker
    private let maximumBodyBytes: Int
    private let timeouts: ConnectionTimeoutHandler?
    /// The origin every request on this connection is addressed to (inside a decrypted tunnel).
    private let origin: String?
    /// The cassette session every request on this connection belongs to (a decrypted tunnel opened by a
    /// `CONNECT` that named one); each request carries it as `X-Kakapo-Session`.
    private let session: String?
    private var head: HTTPRequestHead?
    private var body: ByteBuffer?
    private var rejected = false
    /// Set once a `CONNECT` took the connection over: nothing more is read as HTTP here.
    private var tunnelling = false
    /// A `CONNECT` head has been read; its end opens the tunnel.
    private var connecting = false
    /// Whether the peer is on loopback, worked out once per connection (it needs the address as text).
    private var loopbackPeer: Bool?
    /// Requests read but not fully answered: a connection waiting for (or streaming) an answer is not idle.
    private var answering = 0
    /// The body of the request being read, when it goes upstream as it arrives.
    private var bodyStream: RequestBodyStream?
    /// A streamed answer's head has gone out and its end has not.
    private var streamingAnswer = false
    /// Bytes of the shared body budget the request being read holds (what has arrived of its body);
    /// handed to the request's `BodyReservation` when it is complete.
    private var heldBodyBytes = 0

    /// A request target as the log may show it: credentials in its query redacted.
    private func loggable(_ target: String) -> String { pipeline.configuration.redactor.redact(target: target) }

    private func peerIsLoopback(_ context: ChannelHandlerContext) -> Bool {
        if let loopbackPeer { return loopbackPeer }
        let answer = HTTPServerHandler.isLoopback(context.channel.remoteAddress)
        loopbackPeer = answer
        return answer
    }

    init(settings: HTTPConnectionSettings, timeouts: ConnectionTimeoutHandler?, origin: String?, session: String? = nil)
    {
        self.session = session
        self.settings = settings
        self.pipeline = settings.pipeline
        self.tracker = settings.tracker
        self.maximumBodyBytes = settings.maximumBodyBytes
        self.timeouts = timeouts
        self.origin = origin
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if tunnelling { return }
        let part = unwrapInboundIn(data)
        if connecting {
            // A CONNECT's body, if any, is ignored; its end opens the tunnel.
            if case .end = part, let head {
                connecting = false
                self.head = nil
                timeouts?.requestReceived()
                connect(head, context: context)
            }
            return
        }
        switch part {
        case .head(let head) where head.method == .CONNECT:
            self.head = head
            connecting = true
        case .head(let head):
            self.head = head
            self.body = nil
            self.rejected = false
            releaseHeldBody()
            if let problem = HTTPServerHandler.hostProblem(head) {
                refuse(problem, status: 400, head: head, context: context)
                return
            }
            let length = head.headers.first(name: "content-length").flatMap(Int.init)
            // Sent upstream as it arrives (no size limit, no buffering), or read whole within the limit.
            bodyStream = streamedBody(for: head, length: length, context: context)
            if bodyStream == nil, let length, length > maximumBodyBytes {
                reject(context: context, head: head)
                return
            }
            if bodyStream == nil, let length, length > settings.bodyBudget.available {
                // Refused before the client sends it. The budget is taken as bytes arrive, so a client
                // that announces a large body and sends nothing holds none of it.
                refuseForBudget(head: head, context: context)
                return
            }
            if head.headers.first(name: "expect")?.lowercased() == "100-continue" {
                // The client waits for permission before sending its body.
                let interim = HTTPResponseHead(version: head.version, status: .continue)
                context.writeAndFlush(wrapOutboundOut(.head(interim)), promise: nil)
            }
            if let bodyStream { respond(to: head, body: [], streaming: bodyStream, context: context) }
        case .body(var part):
            if let bodyStream {
                if !bodyStream.append(Array(part.readableBytesView)) {
                    // The upstream is behind: read no more from the client until it catches up.
                    context.channel.setOption(ChannelOptions.autoRead, value: false).whenFailure { _ in }
                }
                return
            }
            guard !rejected, let head else { return }
            if (body?.readableBytes ?? 0) + part.readableBytes > maximumBodyBytes {
                reject(context: context, head: head)
                return
            }
            guard settings.bodyBudget.reserve(part.readableBytes) else {
                refuseForBudget(head: head, context: context)
                return
            }
            heldBodyBytes += part.readableBytes
            if body == nil {
                body = part
            } else {
                body!.writeBuffer(&part)
            }
        case .end:
            timeouts?.requestReceived()
            if let bodyStream {
                bodyStream.finish()
                self.bodyStream = nil
                self.head = nil
                return
            }
            guard !rejected, let head else { return }
            self.head = nil
            let bytes = body.map { Array($0.readableBytesView) } ?? []
            body = nil
            respond(to: head, body: bytes, context: context)
        }
    }

    /// A stream for the body of `head` when it should go upstream as it arrives: a body of unknown or
    /// large size (over 1 MiB) that only the upstream will see (`RequestPipeline.streamsBody(of:)`).
    private func streamedBody(for head: HTTPRequestHead, length: Int?, context: ChannelHandlerContext)
        -> RequestBodyStream?
    {
        // Only passthrough streams bodies; the header checks below cost more than this one.
        guard pipeline.configuration.mode == .passthrough else { return nil }
        let chunked = head.headers[canonicalForm: "transfer-encoding"].contains { $0.lowercased() == "chunked" }
        guard chunked || (length ?? 0) > 1 << 20 else { return nil }
        let probe = HTTP.Request(method: HTTP.Method(head.method.rawValue), target: head.uri, origin: origin)
        guard pipeline.streamsBody(of: probe) else { return nil }
        let stream = RequestBodyStream(length: chunked ? nil : length)
        let channel = context.channel
        stream.onDrained {
            channel.eventLoop.execute {
                channel.setOption(ChannelOptions.autoRead, value: true).whenFailure { _ in }
            }
        }
        // A long upload is not a slow client: the request deadline does not apply to it.
        timeouts?.requestReceived()
        return stream
    }

    func channelInactive(context: ChannelHandlerContext) {
        // A client that leaves mid-upload: the upstream request is abandoned.
        bodyStream?.fail()
        bodyStream = nil
        body = nil
        releaseHeldBody()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        // Taken out for a tunnel, or the channel is gone: a half-read body gives its bytes back.
        body = nil
        releaseHeldBody()
    }

    /// Gives back the budget held by the body being read (one that will not be answered).
    private func releaseHeldBody() {
        settings.bodyBudget.release(heldBodyBytes)
        heldBodyBytes = 0
    }

    /// Why a request head's `Host` is not acceptable, or nil: HTTP/1.1 needs exactly one (RFC 9112 3.2),
    /// and no version may send two, which would let two readers see two hosts.
    static func hostProblem(_ head: HTTPRequestHead) -> String? {
        // Counted by name alone: `headers[canonicalForm:]` splits values and costs more on every request.
        var count = 0
        for (name, _) in head.headers where name.utf8.count == 4 && name.lowercased() == "host" { count += 1 }
        if count > 1 { return "the request has \(count) Host headers; send exactly one" }
        if count == 0 && (head.version.major > 1 || head.version.minor >= 1) {
            return "an HTTP/1.1 request needs a Host header"
        }
        return nil
    }

    private func respond(
        to head: HTTPRequestHead, body: [UInt8], streaming bodyStream: RequestBodyStream? = nil,
        context: ChannelHandlerContext
    ) {
        // Given back when the answer is ready, or when this request is dropped on the way.
        let reservation = BodyReservation(heldBodyBytes, of: settings.bodyBudget)
        heldBodyBytes = 0
        // Worked out only for the requests that need it (absolute-form and admin ones), not for every request.
        let configuredHost = pipeline.configuration.host
        func listening() -> ListeningAddress {
            ListeningAddress(configuredHost: configuredHost, local: context.channel.localAddress)
        }
        let headers = HTTP.Headers(
            head.headers.map { HTTP.Headers.Field(name: $0.name, value: $0.value) })
        var addressed = HTTP.Request(
            method: HTTP.Method(head.method.rawValue), target: head.uri, headers: headers, body: body,
            origin: origin)
        if let session { addressed.headers.replaceOrAdd(name: "X-Kakapo-Session", value: session) }
        if origin == nil, settings.forward != nil, !head.uri.hasPrefix("/") {
            // Absolute form, as clients send a forward proxy.
            guard let split = RequestOrigin.split(absoluteURL: head.uri) else {
                answerError(
                    "a forward proxy needs an absolute http:// URL or a path, not \"\(head.uri)\"", status: 400,
                    for: head, context: context)
                return
            }
            if let parts = RequestOrigin.parts(of: split.origin), listening().isSelf(host: parts.host, port: parts.port)
            {
                // Forwarded, it would come back from loopback as a request of Kakapo's own.
                pipeline.logger.warning("refused \(head.method) \(loggable(head.uri)): it names Kakapo's own address")
                answerError(
                    "a request through the proxy may not be addressed to Kakapo itself (\(split.origin))", status: 403,
                    for: head, context: context)
                return
            }
            (addressed.origin, addressed.target) = (split.origin, split.target)
        }
        let request = addressed
        if request.origin == nil, let base = pipeline.upstream?.url, base.escapesPrefix(request.target) {
            pipeline.logger.warning(
                "refused \(head.method) \(loggable(head.uri)): its dot-segments climb out of \(base.description)")
            answerError(
                "the path \"\(request.path)\" climbs out of the upstream's \"\(base.pathPrefix)\" with dot-segments",
                status: 400, for: head, context: context)
            return
        }
        if HTTPServerHandler.isWebSocketUpgrade(head), let destination = pipeline.tunnelDestination(for: request) {
            let tls = settings.tls.upstream
            guard !destination.secure || tls != nil else {
                answerError(
                    "WebSockets to \(destination.authority) over TLS need TLS support (KakapoTLS.UpstreamTLSClient as the server's ServerTLS.upstream)",
                    status: 502, for: head, context: context)
                return
            }
            openWebSocketTunnel(head, to: destination, tls: destination.secure ? tls : nil, context: context)
            return
        }
        let fromLoopback = peerIsLoopback(context)
        let refusal =
            RequestPipeline.isAdmin(request)
            ? AdminEndpoints.browserRefusal(request, listening: listening(), pipeline: pipeline) : nil
        let started = NIODeadline.now()
        tracker.begin()
        answering += 1
        let loop = context.eventLoop
        let bound = NIOLoopBound((self, context), eventLoop: loop)
        let answered: @Sendable (Answer) -> Void = { answer in
            reservation.release()
            let finish: @Sendable () -> Void = {
                let (handler, context) = bound.value
                handler.finish(answer, for: head, request: request, started: started, context: context)
            }
            let delay = ReplayDelay.nanoseconds(answer.delay)
            if delay > 0 {
                // A route's latency: the answer is scheduled on the event loop, no thread waits for it.
                loop.scheduleTask(in: .nanoseconds(delay), finish)
            } else if loop.inEventLoop {
                finish()
            } else {
                loop.execute(finish)
            }
        }
        if let refusal {
            answered(refusal)
        } else if let bodyStream {
            pipeline.forward(request, streaming: bodyStream, completion: answered)
        } else {
            pipeline.handle(request, fromLoopback: fromLoopback, completion: answered)
        }
    }

    /// Sends the answer to a request, on the event loop, and journals the request.
    private func finish(
        _ answer: Answer, for head: HTTPRequestHead, request: HTTP.Request, started: NIODeadline,
        context: ChannelHandlerContext
    ) {
        let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
        deliver(answer, for: head, context: context) { [tracker] in
            // Called on the event loop once the answer is out.
            tracker.end()
            bound.value.answering -= 1
        }
        let elapsed = Double((NIODeadline.now() - started).nanoseconds) / 1e6
        let url = pipeline.journal(request, answer, milliseconds: elapsed)
        if pipeline.logger.logLevel <= .debug {
            pipeline.logger.debug(
                "\(request.method) \(url) -> \(answer.status) from \(answer.source.rawValue) in \(Int(elapsed.rounded())) ms"
            )
        }
    }

    /// Writes the answer, or breaks the connection the way a route's fault says.
    private func deliver(
        _ answer: Answer, for request: HTTPRequestHead, context: ChannelHandlerContext,
        done: @escaping @Sendable () -> Void
    ) {
        let fault: Fault.Kind
        switch answer.outcome {
        case .response(let status, let headers, let body):
            write(
                status: status, headers: headers, body: body, answer: answer, for: request, context: context, done: done
            )
            return
        case .fault(let kind):
            fault = kind
        }
        let channel = context.channel
        switch fault {
        case .connectionReset:
            // SO_LINGER with a zero timeout makes close() send RST instead of FIN.
            let lingering =
                (channel as? any SocketOptionProvider)?.setSoLinger(linger(l_onoff: 1, l_linger: 0))
                ?? channel.eventLoop.makeSucceededVoidFuture()
            lingering.whenComplete { _ in
                channel.close(promise: nil)
                done()
            }
        case .emptyResponse:
            channel.close().whenComplete { _ in done() }
        case .malformedResponse:
            // Written below the HTTP encoder, so the bytes reach the socket as they are.
            let garbage = ByteBuffer(bytes: Array("\u{0}\u{7F}KAKAPO-MALFORMED \u{1}\u{2}\r\n\r\n".utf8))
            if let encoder = try? context.pipeline.syncOperations.context(handlerType: HTTPResponseEncoder.self) {
                encoder.writeAndFlush(NIOAny(garbage)).whenComplete { _ in
                    channel.close(promise: nil)
                    done()
                }
            } else {
                channel.close().whenComplete { _ in done() }
            }
        }
    }

    private func write(
        status: Int, headers fields: HTTP.Headers, body: Answer.Body, answer: Answer, for request: HTTPRequestHead,
        context: ChannelHandlerContext, done: @escaping @Sendable () -> Void
    ) {
        let isHead = request.method == .HEAD
        let bytes: [UInt8]
        switch body {
        case .bytes(let whole): bytes = whole
        case .live,
            .recorded where !isHead:
            writeStream(
                status: status, headers: fields, body: body, source: answer.source, for: request, context: context,
                done: done)
            return
        case .live, .recorded: bytes = []
        }
        // A recorded answer is prepared once for every method but HEAD; a HEAD request prepares its own.
        let prepared =
            isHead
            ? PreparedResponse(status: status, headers: fields, body: bytes, source: answer.source, for: .HEAD)
            : answer.replay.map { position in
                settings.replies.prepared(position) {
                    PreparedResponse(status: status, headers: fields, body: bytes, source: answer.source)
                }
            }
                ?? PreparedResponse(
                    status: status, headers: fields, body: bytes, source: answer.source, for: request.method)
        let keepAlive = keepsAlive(request)
        var headers = isHead ? prepared.headHeaders : prepared.headers
        if !keepAlive { headers.add(name: "Connection", value: "close") }
        context.write(
            wrapOutboundOut(
                .head(HTTPResponseHead(version: request.version, status: prepared.status, headers: headers))),
            promise: nil)
        if !isHead && !prepared.bodyless && !bytes.isEmpty {
            context.write(wrapOutboundOut(.body(.byteBuffer(prepared.body(bytes)))), promise: nil)
        }
        guard !keepAlive else {
            // Out as far as the socket takes it: nothing waits for the write to complete.
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            done()
            return
        }
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in
            channel.close(promise: nil)
            done()
        }
    }

    /// Whether the connection stays open after the answer to `request`: not when the client asked to close
    /// it, nor when the answer goes out before the request's body has all arrived (an upload the upstream
    /// refused or failed): the rest of that body must not be read as a next request, and a client that
    /// then leaves mid-body must find no exchange still open.
    private func keepsAlive(_ request: HTTPRequestHead) -> Bool { request.isKeepAlive && bodyStream == nil }

    /// Writes `{"error": message}` with `status` (and `headers`) and closes the connection.
    private func answerError(
        _ message: String, status: Int, headers: [(String, String)] = [], for head: HTTPRequestHead,
        context: ChannelHandlerContext
    ) {
        var response = HTTP.Response.error(message, status: status)
        for (name, value) in headers { response.headers.add(name: name, value: value) }
        var closing = head
        closing.headers.replaceOrAdd(name: "connection", value: "close")
        tracker.begin()
        deliver(Answer(response: response, source: .error), for: closing, context: context) { [tracker] in tracker.end()
        }
    }

    /// Answers `CONNECT host:port`: a decrypted tunnel for intercepted hosts, a blind one for the rest,
    /// 400 for a target that is not `host:port`, 405 when Kakapo is not a forward proxy.
    private func connect(_ head: HTTPRequestHead, context: ChannelHandlerContext) {
        guard let forward = settings.forward, origin == nil else {
            answerConnect(
                with: "CONNECT is answered in forward-proxy mode only (--proxy)", status: .methodNotAllowed,
                context: context)
            return
        }
        guard let (host, port) = RequestOrigin.splitAuthority(head.uri), let port,
            let tunnelOrigin = RequestOrigin.make(scheme: port == 80 ? "http" : "https", host: host, port: port)
        else {
            pipeline.logger.info("refused a malformed CONNECT target \"\(head.uri)\"")
            answerConnect(
                with: "malformed CONNECT target \"\(head.uri)\": expected host:port", status: .badRequest,
                context: context)
            return
        }
        let listening = ListeningAddress(
            configuredHost: pipeline.configuration.host, local: context.channel.localAddress)
        if listening.isSelf(host: host, port: port) {
            refuseTunnelToSelf(head.uri, context: context)
            return
        }
        // A CONNECT that names a cassette session (proxy credentials) gives it the whole decrypted tunnel.
        var session: String?
        if let sessions = pipeline.sessions {
            session = SessionRegistry.sessionID(
                in: HTTP.Headers(
                    head.headers.map { HTTP.Headers.Field(name: $0.name, value: $0.value) }))
            if let id = session, !sessions.isOpen(id) {
                answerConnect(with: SessionRegistry.unknown(id), status: .notFound, context: context)
                return
            }
        }
        if let interception = settings.tls.interception, forward.intercepts(host) {
            let channel = context.channel
            do {
                let tls = try interception.makeServerHandler(forHost: host)
                tunnelling = true
                let operations = channel.pipeline.syncOperations
                HTTPConnectionSettings.removeHTTPHandlers(from: operations)
                channel.writeAndFlush(HTTPServerHandler.connectionEstablished, promise: nil)
                try operations.addHandler(tls)
                try settings.addHTTPHandlers(
                    to: operations, timeouts: timeouts, origin: tunnelOrigin, session: session)
                pipeline.logger.debug("CONNECT \(host):\(port): decrypting")
            } catch {
                pipeline.logger.error("CONNECT \(host):\(port): cannot set up TLS: \(error)")
                channel.close(promise: nil)
            }
            return
        }
        if let session {
            pipeline.logger.warning(
                "CONNECT \(host):\(port) for session \(session): not intercepted (--intercept), so its tunnel is blind and nothing in it is recorded or replayed"
            )
        }
        openBlindTunnel(
            to: host, port: port, timeout: forward.tunnelConnectTimeout, listening: listening, context: context)
    }

    /// 403 for a `CONNECT` to Kakapo's own listening address: the tunnel's requests would reach Kakapo from
    /// loopback, as if they were its own (the admin API among them).
    private func refuseTunnelToSelf(_ target: String, context: ChannelHandlerContext) {
        pipeline.logger.warning("refused CONNECT \(target): it is Kakapo's own address")
        answerConnect(
            with: "a tunnel through the proxy may not lead to Kakapo itself (\(target))", status: .forbidden,
            context: context)
    }

    /// Answers a `CONNECT` that opens no tunnel with `{"error": message}` and closes the connection. Written
    /// below the HTTP encoder, which leaves out the body of any answer to a `CONNECT`.
    private func answerConnect(with message: String, status: HTTPResponseStatus, context: ChannelHandlerContext) {
        let body = ErrorBody.error(message)
        var bytes = ByteBuffer(
            string: "HTTP/1.1 \(status.code) \(status.reasonPhrase)\r\nContent-Type: application/json\r\n"
                + "Content-Length: \(body.count)\r\nX-Kakapo-Source: \(ResponseSource.error.rawValue)\r\n"
                + "Connection: close\r\n\r\n")
        bytes.writeBytes(body)
        tunnelling = true
        let channel = context.channel
        guard let encoder = try? channel.pipeline.syncOperations.context(handlerType: HTTPResponseEncoder.self) else {
            channel.close(promise: nil)
            return
        }
        encoder.writeAndFlush(NIOAny(bytes)).whenComplete { _ in channel.close(promise: nil) }
    }

    private static let connectionEstablished = ByteBuffer(string: "HTTP/1.1 200 Connection Established\r\n\r\n")

    /// Connects to `host:port`, answers 200 and from then on passes bytes both ways untouched; answers 502
    /// when the host cannot be reached.
    private func openBlindTunnel(
        to host: String, port: Int, timeout: Double, listening: ListeningAddress, context: ChannelHandlerContext
    ) {
        tunnelling = true
        let channel = context.channel
        let logger = pipeline.logger
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        ClientBootstrap(group: context.eventLoop)
            .connectTimeout(.milliseconds(Int64(timeout * 1000)))
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .connect(host: host, port: port)
            .whenComplete { result in
                let (handler, context) = bound.value
                switch result {
                case .success(let upstream) where listening.isSelf(upstream.remoteAddress):
                    // A name that resolved to this machine: known only once connected.
                    upstream.close(promise: nil)
                    handler.tunnelling = false
                    handler.refuseTunnelToSelf("\(host):\(port)", context: context)
                case .success(let upstream):
                    do {
                        try HTTPServerHandler.splice(channel, with: upstream) {
                            channel.writeAndFlush(HTTPServerHandler.connectionEstablished, promise: nil)
                        }
                        logger.debug("CONNECT \(host):\(port): blind tunnel")
                    } catch {
                        channel.close(promise: nil)
                        upstream.close(promise: nil)
                    }
                case .failure(let error):
                    handler.tunnelling = false
                    logger.info("CONNECT \(host):\(port): cannot reach it: \(error)")
                    handler.answerConnect(
                        with: "cannot open a tunnel to \(host):\(port): \(error)", status: .badGateway, context: context
                    )
                }
            }
    }

    /// Joins a client's connection to an upstream connection: the HTTP handlers and the request deadline
    /// go (a tunnel may carry one long transfer), the idle limit moves to the tunnel (closed when neither
    /// side has sent anything for that long), `beforeJoining` runs with the connection raw, and from then
    /// on bytes pass both ways untouched.
    private static func splice(
        _ channel: any Channel, with upstream: any Channel, beforeJoining: () -> Void = {}
    ) throws {
        let operations = channel.pipeline.syncOperations
        let timeouts = try? operations.handler(type: ConnectionTimeoutHandler.self)
        let (near, far) = TunnelHandler.pair(idleTimeout: timeouts?.idleTimeout)
        HTTPConnectionSettings.removeHTTPHandlers(from: operations)
        if let timeouts {
            operations.removeHandler(timeouts, promise: nil)
        }
        beforeJoining()
        try operations.addHandler(near)
        try upstream.pipeline.syncOperations.addHandler(far)
    }

    /// Whether a request asks to become a WebSocket (`Connection: Upgrade`, `Upgrade: websocket`).
    static func isWebSocketUpgrade(_ head: HTTPRequestHead) -> Bool {
        head.headers[canonicalForm: "connection"].contains { $0.lowercased() == "upgrade" }
            && head.headers["upgrade"].contains { $0.lowercased() == "websocket" }
    }

    /// Tunnels a WebSocket upgrade to the upstream, unrecorded: the request head goes there as received
    /// (`Host` set to the upstream's), and from then on the upstream's answer (`101 Switching Protocols`
    /// or a refusal) and every frame pass through untouched. An unreachable upstream gets 502.
    private func openWebSocketTunnel(
        _ head: HTTPRequestHead, to destination: WebSocketDestination, tls: (any TLSOrigination)?,
        context: ChannelHandlerContext
    ) {
        tunnelling = true
        let channel = context.channel
        let logger = pipeline.logger
        let target = loggable(head.uri)
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        let upgrade = ByteBuffer(
            string: destination.head(
                method: head.method.rawValue, version: (head.version.major, head.version.minor),
                fields: head.headers.map { ($0.name, $0.value) }))
        let timeout = pipeline.upstream?.configuration.connectTimeout ?? 10
        let host = destination.host
        ClientBootstrap(group: context.eventLoop)
            .connectTimeout(.milliseconds(Int64(timeout * 1000)))
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .connect(host: destination.host, port: destination.port)
            .flatMap { upstream in
                // To a wss:// upstream, TLS first: a failed handshake is answered 502 like a refused connection.
                guard let tls else { return upstream.eventLoop.makeSucceededFuture(upstream) }
                return tls.secure(upstream, host: host).map { upstream }.flatMapErrorThrowing { error in
                    upstream.close(promise: nil)
                    throw error
                }
            }
            .whenComplete { result in
                let (handler, context) = bound.value
                switch result {
                case .success(let upstream):
                    do {
                        try HTTPServerHandler.splice(channel, with: upstream)
                        upstream.writeAndFlush(upgrade, promise: nil)
                        logger.debug(
                            "\(head.method) \(target): WebSocket tunnelled to \(destination.authority), not recorded")
                    } catch {
                        channel.close(promise: nil)
                        upstream.close(promise: nil)
                    }
                case .failure(let error):
                    handler.tunnelling = false
                    handler.answerError(
                        "cannot open a WebSocket tunnel to \(destination.authority): \(error)", status: 502, for: head,
                        context: context)
                }
            }
    }

    /// Writes an answer piece by piece: a live one as the upstream delivers it, a recorded stream with
    /// its recorded gaps (or back to back with `--stream-timing none`), through `RecordedStreamPlayer`.
    private func writeStream(
        status: Int, headers fields: HTTP.Headers, body: Answer.Body, source: ResponseSource,
        for request: HTTPRequestHead, context: ChannelHandlerContext, done: @escaping @Sendable () -> Void
    ) {
        var headers = PreparedResponse.streamingHeaders(fields, source: source)
        let keepAlive = keepsAlive(request)
        if !keepAlive { headers.add(name: "Connection", value: "close") }
        context.writeAndFlush(
            wrapOutboundOut(
                .head(
                    HTTPResponseHead(
                        version: request.version, status: HTTPResponseStatus(statusCode: status), headers: headers))),
            promise: nil)
        streamingAnswer = true
        let loop = context.eventLoop
        let bound = NIOLoopBound((self, context), eventLoop: loop)
        let channel = context.channel
        var live: LiveResponse?
        if case .live(let stream) = body { live = stream }
        let send: @Sendable (LiveResponse.Event) -> Void = { [live] event in
            loop.execute {
                let (handler, context) = bound.value
                switch event {
                case .data(let bytes):
                    let written = context.writeAndFlush(
                        handler.wrapOutboundOut(.body(.byteBuffer(ByteBuffer(bytes: bytes)))))
                    if let live {
                        // The socket took them (backpressure), or the client is gone.
                        written.whenComplete { result in
                            switch result {
                            case .success: live.delivered(bytes.count)
                            case .failure: live.cancel()
                            }
                        }
                    }
                case .end:
                    handler.streamingAnswer = false
                    context.writeAndFlush(handler.wrapOutboundOut(.end(nil))).whenComplete { _ in
                        if !keepAlive { channel.close(promise: nil) }
                        done()
                    }
                case .broken:
                    handler.streamingAnswer = false
                    channel.close().whenComplete { _ in done() }
                }
            }
        }
        switch body {
        case .live(let live):
            // A client that leaves while the upstream is quiet is noticed too.
            channel.closeFuture.whenComplete { _ in live.cancel() }
            live.attach(send)
        case .recorded(let chunks):
            RecordedStreamPlayer(chunks: chunks, timed: pipeline.configuration.streamTiming == .recorded).play(
                after: { nanoseconds, work in
                    if nanoseconds > 0 {
                        loop.scheduleTask(in: .nanoseconds(nanoseconds), work)
                    } else {
                        loop.execute(work)
                    }
                },
                isCancelled: { !channel.isActive },
                deliver: { event in
                    switch event {
                    case .data(let bytes): send(.data(bytes))
                    case .end: send(.end)
                    }
                })
        case .bytes(let bytes):
            send(.data(bytes))
            send(.end)
        }
    }

    private func reject(context: ChannelHandlerContext, head: HTTPRequestHead) {
        refuse(
            "the request body is larger than the limit of \(maximumBodyBytes) bytes", status: 413, head: head,
            context: context)
    }

    /// 503 for a body that does not fit in what all connections may buffer together; the client may try
    /// again once others are answered.
    private func refuseForBudget(head: HTTPRequestHead, context: ChannelHandlerContext) {
        pipeline.logger.warning(
            "refused \(head.method) \(loggable(head.uri)): request bodies in memory would pass \(settings.bodyBudget.limit) bytes"
        )
        refuse(
            "the server holds as many request bodies as it may (\(settings.bodyBudget.limit) bytes); try again shortly",
            status: 503, headers: [("Retry-After", "1")], head: head, context: context)
    }

    /// Answers the request being read with an error and closes the connection; the rest of its body is
    /// read and dropped.
    private func refuse(
        _ message: String, status: Int, headers: [(String, String)] = [], head: HTTPRequestHead,
        context: ChannelHandlerContext
    ) {
        rejected = true
        body = nil
        bodyStream?.fail()
        bodyStream = nil
        self.head = nil
        releaseHeldBody()
        answerError(message, status: status, headers: headers, for: head, context: context)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        // A connection that sends nothing for the idle timeout is closed, so slow or stuck clients do
        // not hold connections forever.
        if event is ConnectionTimeoutHandler.Idle {
            if answering == 0 { context.close(promise: nil) }
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    /// Answers a request NIO's parser rejected, before the connection is closed: 431 when the header
    /// section is too large, 400 with the parser's reason otherwise (NIO's own handler answers a bare 400
    /// to both). Nothing can be said once a streamed answer has started.
    private func answerMalformed(_ parserError: HTTPParserError, context: ChannelHandlerContext) {
        guard !streamingAnswer else { return }
        let tooLarge = parserError == .headerOverflow
        let message =
            tooLarge
            ? "the request's header section is larger than the server accepts"
            : "malformed HTTP request: \(parserError)"
        let body = ErrorBody.error(message)
        let headers = NIOHTTP1.HTTPHeaders([
            ("Content-Type", "application/json"), ("Content-Length", String(body.count)), ("Connection", "close"),
            ("X-Kakapo-Source", ResponseSource.error.rawValue),
        ])
        let status: HTTPResponseStatus = tooLarge ? .requestHeaderFieldsTooLarge : .badRequest
        context.write(
            wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: status, headers: headers))), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(bytes: body)))), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if let parserError = error as? HTTPParserError {
            answerMalformed(parserError, context: context)
        } else if let origin {
            // Inside a decrypted tunnel: a client that refused Kakapo's certificate says so in one line;
            // ordinary closes are no news.
            switch settings.tls.interception?.closeReason(for: error) ?? .failed("\(error)") {
            case .untrusted(let alert):
                let told = alert.map { " (TLS alert \($0))" } ?? ""
                pipeline.logger.info(
                    "connection for \(origin) closed: curl or the browser did not trust Kakapo's CA\(told): run `kakapo ca trust`"
                )
            case .ordinary(let reason):
                pipeline.logger.debug("connection for \(origin) closed: \(reason)")
            case .failed(let reason):
                pipeline.logger.info("connection for \(origin) closed: \(reason)")
            }
        }
        context.close(promise: nil)
    }

    /// Whether a peer is on this machine: a Unix socket, or an address `ListeningAddress.isLoopbackName`
    /// calls loopback (the one rule for `127.0.0.0/8`, `::1` and `::ffff:127.x.x.x`).
    static func isLoopback(_ address: SocketAddress?) -> Bool {
        guard let address else { return false }
        if case .unixDomainSocket = address { return true }
        return address.ipAddress.map(ListeningAddress.isLoopbackName) ?? false
    }
}
