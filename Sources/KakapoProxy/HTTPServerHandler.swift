import KakapoHTTP
import NIOCore
import NIOHTTP1

#if canImport(Glibc)
    import Glibc
#else
    import Darwin
#endif

/// Reads one HTTP/1.1 request at a time from a connection, hands it to the pipeline, and writes the answer
/// with a correct `Content-Length`. Request bodies over the limit get 413 and the connection is closed.
/// Runs on the channel's event loop; the pipeline's answer hops back onto it.
final class HTTPServerHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let pipeline: RequestPipeline
    private let tracker: InFlightTracker
    private let maximumBodyBytes: Int
    private let deadline: RequestDeadlineHandler?
    private var head: HTTPRequestHead?
    private var body: ByteBuffer?
    private var rejected = false
    /// Whether the peer is on loopback, worked out once per connection (it needs the address as text).
    private var loopbackPeer: Bool?

    private func peerIsLoopback(_ context: ChannelHandlerContext) -> Bool {
        if let loopbackPeer { return loopbackPeer }
        let answer = HTTPServerHandler.isLoopback(context.channel.remoteAddress)
        loopbackPeer = answer
        return answer
    }

    init(pipeline: RequestPipeline, tracker: InFlightTracker, maximumBodyBytes: Int, deadline: RequestDeadlineHandler?)
    {
        self.deadline = deadline
        self.pipeline = pipeline
        self.tracker = tracker
        self.maximumBodyBytes = maximumBodyBytes
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            self.head = head
            self.body = nil
            self.rejected = false
            if let length = head.headers.first(name: "content-length").flatMap(Int.init), length > maximumBodyBytes {
                reject(context: context, head: head)
            } else if head.headers.first(name: "expect")?.lowercased() == "100-continue" {
                // The client waits for permission before sending its body.
                let interim = HTTPResponseHead(version: head.version, status: .continue)
                context.writeAndFlush(wrapOutboundOut(.head(interim)), promise: nil)
            }
        case .body(var part):
            guard !rejected, let head else { return }
            if (body?.readableBytes ?? 0) + part.readableBytes > maximumBodyBytes {
                reject(context: context, head: head)
                return
            }
            if body == nil {
                body = part
            } else {
                body!.writeBuffer(&part)
            }
        case .end:
            deadline?.requestReceived()
            guard !rejected, let head else { return }
            self.head = nil
            let bytes = body.map { Array($0.readableBytesView) } ?? []
            body = nil
            respond(to: head, body: bytes, context: context)
        }
    }

    private func respond(to head: HTTPRequestHead, body: [UInt8], context: ChannelHandlerContext) {
        var headers = KakapoHTTP.HTTPHeaders()
        for (name, value) in head.headers { headers.add(name: name, value: value) }
        let request = HTTPRequest(
            method: KakapoHTTP.HTTPMethod(head.method.rawValue), target: head.uri, headers: headers, body: body)
        let fromLoopback = peerIsLoopback(context)
        let started = NIODeadline.now()
        tracker.begin()
        let loop = context.eventLoop
        let bound = NIOLoopBound((self, context), eventLoop: loop)
        pipeline.handle(request, fromLoopback: fromLoopback) { [tracker, pipeline] answer in
            let finish: @Sendable () -> Void = {
                let (handler, context) = bound.value
                handler.deliver(answer, for: head, context: context) {
                    tracker.end()
                }
                let elapsed = Double((NIODeadline.now() - started).nanoseconds) / 1e6
                let url = pipeline.journal(request, answer, milliseconds: elapsed)
                if pipeline.logger.logLevel <= .debug {
                    pipeline.logger.debug(
                        "\(request.method) \(url) -> \(answer.response.status) from \(answer.source.rawValue) in \(Int(elapsed.rounded())) ms"
                    )
                }
            }
            if answer.delay > .zero {
                // A route's latency: the answer is scheduled on the event loop, no thread waits for it.
                let (seconds, attoseconds) = answer.delay.components
                loop.scheduleTask(in: .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)) { finish() }
            } else if loop.inEventLoop {
                finish()
            } else {
                loop.execute(finish)
            }
        }
    }

    /// Writes the answer, or breaks the connection the way a route's fault says.
    private func deliver(
        _ answer: ProxyAnswer, for request: HTTPRequestHead, context: ChannelHandlerContext,
        done: @escaping @Sendable () -> Void
    ) {
        guard let fault = answer.fault else {
            write(answer, for: request, context: context, done: done)
            return
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
        _ answer: ProxyAnswer, for request: HTTPRequestHead, context: ChannelHandlerContext,
        done: @escaping @Sendable () -> Void
    ) {
        let prepared = answer.prepared ?? PreparedResponse(answer.response, source: answer.source, for: request.method)
        let keepAlive = request.isKeepAlive
        let isHead = request.method == .HEAD
        var headers = isHead ? prepared.headHeaders : prepared.headers
        if !keepAlive { headers.add(name: "Connection", value: "close") }
        context.write(
            wrapOutboundOut(
                .head(HTTPResponseHead(version: request.version, status: prepared.status, headers: headers))),
            promise: nil)
        if !isHead && !prepared.bodyless && prepared.body.readableBytes > 0 {
            context.write(wrapOutboundOut(.body(.byteBuffer(prepared.body))), promise: nil)
        }
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in
            if !keepAlive { channel.close(promise: nil) }
            done()
        }
    }

    private func reject(context: ChannelHandlerContext, head: HTTPRequestHead) {
        rejected = true
        body = nil
        self.head = nil
        let message = "the request body is larger than the limit of \(maximumBodyBytes) bytes"
        let answer = ProxyAnswer(response: .json(["error": .string(message)], status: 413), source: .error)
        var closing = head
        closing.headers.replaceOrAdd(name: "connection", value: "close")
        tracker.begin()
        write(answer, for: closing, context: context) { [tracker] in tracker.end() }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        // A connection that sends nothing for the idle timeout is closed, so slow or stuck clients do
        // not hold connections forever.
        if event is IdleStateHandler.IdleStateEvent {
            context.close(promise: nil)
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    static func isLoopback(_ address: SocketAddress?) -> Bool {
        guard let address else { return false }
        switch address {
        case .v4:
            return address.ipAddress?.hasPrefix("127.") ?? false
        case .v6:
            let ip = address.ipAddress ?? ""
            return ip == "::1" || ip.hasPrefix("::ffff:127.")
        case .unixDomainSocket:
            return true
        }
    }
}
