import KakapoEngine
import KakapoHTTP
import KakapoStreams
import KakapoUpstream
import NIOCore
import NIOHTTP1

/// The one handler of a connection's requests: `RequestReader` turns HTTP parts into requests within the
/// limits, `RequestAddressing` addresses them (absolute-form targets of a forward proxy), the pipeline
/// answers them and `AnswerWriter` writes the answer; `ConnectTunnel` and `WebSocketTunnel` take the
/// connection over, and `ErrorWriter` writes every error Kakapo answers itself. Those are plain types
/// called from here rather than handlers of their own, so a request costs no extra hop through the
/// channel pipeline. Runs on the channel's event loop; the pipeline's answer hops back onto it. Also
/// closes a connection that has been idle with no answer on its way.
final class HTTPServerHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    let settings: HTTPConnectionSettings
    let pipeline: RequestPipeline
    private let timeouts: ConnectionTimeoutHandler?
    /// The origin every request on this connection is addressed to (inside a decrypted tunnel).
    let origin: String?
    /// The cassette session every request on this connection belongs to (a decrypted tunnel opened by a
    /// `CONNECT` that named one); each request carries it as `X-Kakapo-Session`.
    let session: String?
    var reader: RequestReader
    let writer: AnswerWriter
    let errors: ErrorWriter
    /// Set once a `CONNECT` or a WebSocket upgrade took the connection over: nothing more is read as HTTP.
    var tunnelling = false
    /// Whether the peer is on loopback, worked out once per connection (it needs the address as text).
    private var loopbackPeer: Bool?
    /// Requests read but not fully answered: a connection waiting for (or streaming) an answer is not idle.
    var answering = 0
    /// Whether this handler serves one HTTP/2 stream (behind NIOHTTP2's translation to HTTP/1 parts).
    private let http2Stream: Bool
    /// Whether anything of the request has been read (on an HTTP/2 stream: whether its head translated).
    private var readAnything = false
    /// The request in flight as `SlowRequestWatch` reads it (`HTTPServerHandler+Watch`).
    var watched = WatchedRequest()
    /// The channel, while `SlowRequestWatch` watches this handler.
    var watchedChannel: (any Channel)?
    /// A gRPC request watched for being left open, with its messages so far (`OpenGRPCCalls`).
    var openCall: OpenGRPCCalls.Watch?
    /// Set once a request was answered before its body ended: nothing more of it is read as HTTP, and an
    /// HTTP/1.1 connection closes after the answer.
    var discarding = false

    init(
        settings: HTTPConnectionSettings, timeouts: ConnectionTimeoutHandler?, origin: String?, session: String? = nil,
        http2Stream: Bool = false
    ) {
        self.http2Stream = http2Stream
        self.settings = settings
        self.pipeline = settings.pipeline
        self.timeouts = timeouts
        self.origin = origin
        self.session = session
        self.reader = RequestReader(settings: settings, timeouts: timeouts, origin: origin)
        self.writer = AnswerWriter(
            replies: settings.replies, streamTiming: settings.pipeline.configuration.streamTiming)
        self.errors = ErrorWriter(tracker: settings.tracker)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if tunnelling || discarding { return }
        readAnything = true
        let part = unwrapInboundIn(data)
        if http2Stream, case .head(let head) = part, head.method == .CONNECT {
            // Refused on its head: an HTTP/2 CONNECT's stream never ends (it would carry the tunnel), and
            // nothing more of it is read. RFC 8441's extended CONNECT (WebSockets over HTTP/2) is not
            // offered (no SETTINGS_ENABLE_CONNECT_PROTOCOL), and a forward proxy's tunnels are opened over
            // HTTP/1.1.
            tunnelling = true
            errors.write(
                "CONNECT over HTTP/2 is not supported: open tunnels (and WebSockets) over HTTP/1.1",
                status: .methodNotAllowed, version: head.version, context: context)
            return
        }
        watch(part, context: context)
        switch reader.read(part, context: context) {
        case nil:
            if case .head(let head) = part { checkOpenCall(head, context: context) }
            return
        case .request(let head, let body, let reservation, let stream)?:
            respond(to: head, body: body, reservation: reservation, streaming: stream, context: context)
        case .connect(var head)?:
            tunnelling = true
            if let unauthorised = RequestAddressing.authorize(&head, origin: origin, settings: settings) {
                errors.writeBelowEncoder(
                    unauthorised, status: .proxyAuthenticationRequired, headers: ErrorWriter.proxyChallenge,
                    channel: context.channel)
                return
            }
            ConnectTunnel(settings: settings, timeouts: timeouts, errors: errors).open(
                head, origin: origin, context: context)
        case .refused(let head, let message, let status, let headers)?:
            watched.phase = .idle
            errors.write(
                message, status: status, headers: headers, version: head.version, headOnly: head.method == .HEAD,
                context: context)
        }
    }

    private func respond(
        to head: HTTPRequestHead, body: [UInt8], reservation: BodyReservation, streaming bodyStream: RequestBodyStream?,
        context: ChannelHandlerContext
    ) {
        // Worked out only for the requests that need it (absolute-form and admin ones), not for every request.
        let configuredHost = pipeline.configuration.host
        func listening() -> ListeningAddress {
            ListeningAddress(configuredHost: configuredHost, local: context.channel.localAddress, pipeline: pipeline)
        }
        let request: HTTP.Request
        switch RequestAddressing.address(
            head, body: body, origin: origin, session: session, settings: settings, listening: listening)
        {
        case .request(var addressed):
            if head.version.major >= 2 {
                // NIOHTTP2's translation marks a body without content-length as chunked; HTTP/2 has no
                // transfer codings, so the request recorded and sent upstream has none.
                addressed.headers.remove(name: "transfer-encoding")
            }
            request = addressed
        case .refused(let message, let status):
            watched.phase = .idle
            errors.write(
                message, status: status, version: head.version, headOnly: head.method == .HEAD, context: context)
            return
        }
        // A WebSocket upgrade: nothing after it is read as HTTP. The pipeline decides who answers it (a
        // route's script, a recorded conversation, a tunnel to the upstream, or an ordinary answer such as a
        // miss, after which the connection closes).
        if WebSocketTunnel.isUpgrade(head) { tunnelling = true }
        let fromLoopback = peerIsLoopback(context)
        let refusal: Answer?
        if RequestPipeline.isAdmin(request) {
            refusal = AdminEndpoints.browserRefusal(
                request, listening: listening(), onAdminListener: settings.adminListener, pipeline: pipeline)
        } else if settings.adminListener {
            refusal = AdminEndpoints.notAdmin(request, pipeline: pipeline)
        } else {
            refusal = nil
        }
        let started = NIODeadline.now()
        settings.tracker.begin()
        answering += 1
        watched.move(to: .answer)
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
    func finish(
        _ answer: Answer, for head: HTTPRequestHead, request: HTTP.Request, started: NIODeadline,
        context: ChannelHandlerContext
    ) {
        let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
        if case .webSocket(let webSocket) = answer.outcome {
            startWebSocket(webSocket, for: head, request: request, answer: answer, started: started, context: context)
            return
        }
        // The connection is not kept when the client asked to close it, nor when the answer goes out
        // before the request's body has all arrived (an upload the upstream refused or failed): the rest
        // of that body must not be read as a next request, and a client that then leaves mid-body must
        // find no exchange still open.
        let keepAlive =
            head.isKeepAlive && reader.bodyStream == nil && !tunnelling && !(discarding && head.version.major < 2)
        // Journaled before it is written: a write that completes at once ends the request's time in flight,
        // and a shutdown started by the client that just read the answer must find it in the journal (a
        // loaded CI machine once printed "0 requests" for an answered one).
        let elapsed = Double((NIODeadline.now() - started).nanoseconds) / 1e6
        let url = pipeline.journal(request, answer, milliseconds: elapsed)
        watched.move(to: WatchedRequest.phase(of: answer))
        let generation = watched.generation
        writer.write(answer, for: head, keepAlive: keepAlive, context: context) { [tracker = settings.tracker] in
            // Called on the event loop once the answer is out.
            tracker.end()
            bound.value.answering -= 1
            bound.value.watched.end(generation)
        }
        if pipeline.logger.logLevel <= .debug {
            pipeline.logger.debug(
                "\(request.method) \(url) -> \(answer.status) from \(answer.source.rawValue) in \(Int(elapsed.rounded())) ms"
            )
        }
    }

    /// Hands the connection over to a WebSocket: tunnelled to the upstream (recorded or not) or played by
    /// Kakapo. The upgrade is journaled now, as answered `101`; what follows is the WebSocket's. A handshake
    /// Kakapo would play but cannot (`WebSocketServing.handshakeProblem`) is answered and journaled `400`.
    private func startWebSocket(
        _ webSocket: WebSocketAnswer, for head: HTTPRequestHead, request: HTTP.Request, answer: Answer,
        started: NIODeadline, context: ChannelHandlerContext
    ) {
        settings.tracker.end()
        answering -= 1
        watched.phase = .idle
        let elapsed = Double((NIODeadline.now() - started).nanoseconds) / 1e6
        if case .play = webSocket, let problem = WebSocketServing.handshakeProblem(head) {
            pipeline.journal(request, .error(problem.reason, status: 400), milliseconds: elapsed)
            errors.write(
                problem.reason, status: .badRequest, headers: problem.headers, version: head.version, context: context)
            return
        }
        let url = pipeline.journal(request, answer, milliseconds: elapsed)
        switch webSocket {
        case .tunnel(let destination, let recording):
            WebSocketTunnel.open(
                head, to: destination, recording: recording, settings: settings, errors: errors, context: context)
        case .play(let play):
            pipeline.logger.debug("\(request.method) \(url): WebSocket answered by Kakapo: \(play.description)")
            WebSocketServing.start(
                play, for: head, request: request, settings: settings, errors: errors, context: context)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        // A client that leaves mid-upload: the upstream request is abandoned.
        reader.abandon()
        unwatch(context: context)
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        // Taken out for a tunnel, or the channel is gone: a half-read body gives its bytes back.
        reader.abandon()
        unwatch(context: context)
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

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if let parserError = error as? HTTPParserError, !writer.streaming {
            // 431 when the header section is too large, 400 with the parser's reason otherwise (NIO's own
            // handler answers a bare 400 to both). Nothing can be said once a streamed answer has started.
            let tooLarge = parserError == .headerOverflow
            errors.write(
                tooLarge
                    ? "the request's header section is larger than the server accepts"
                    : "malformed HTTP request: \(parserError)",
                status: tooLarge ? .requestHeaderFieldsTooLarge : .badRequest, context: context)
            return
        }
        if http2Stream && !readAnything {
            // NIOHTTP2 could not translate the stream's request head to HTTP/1 (a pseudo-header field
            // missing, repeated or invalid: RFC 9113 8.3 calls the request malformed). Said, not just reset.
            readAnything = true
            errors.write("malformed HTTP/2 request: \(error)", status: .badRequest, version: .http2, context: context)
            return
        }
        if let origin, !(error is HTTPParserError) {
            TLSCloseReason.log(error, on: origin, tls: settings.tls, logger: pipeline.logger)
        }
        context.close(promise: nil)
    }

    private func peerIsLoopback(_ context: ChannelHandlerContext) -> Bool {
        if let loopbackPeer { return loopbackPeer }
        let answer = Self.isLoopback(context.channel.remoteAddress)
        loopbackPeer = answer
        return answer
    }

    /// Whether a peer is on this machine: a Unix socket, or an address `ListeningAddress.isLoopbackName`
    /// calls loopback (the one rule for `127.0.0.0/8`, `::1` and `::ffff:127.x.x.x`).
    static func isLoopback(_ address: SocketAddress?) -> Bool {
        guard let address else { return false }
        if case .unixDomainSocket = address { return true }
        return address.ipAddress.map(ListeningAddress.isLoopbackName) ?? false
    }
}
