import KakapoHTTP
import NIOCore
import NIOHTTP1

/// Reads one HTTP/1.1 request at a time from a connection, hands it to the pipeline, and writes the answer
/// with a correct `Content-Length`. Request bodies over the limit get 413 and the connection is closed.
/// Runs on the channel's event loop; the pipeline's answer hops back onto it.
final class HTTPServerHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let pipeline: RequestPipeline
    private let tracker: InFlightTracker
    private let maximumBodyBytes: Int
    private var head: HTTPRequestHead?
    private var body: ByteBuffer?
    private var rejected = false

    init(pipeline: RequestPipeline, tracker: InFlightTracker, maximumBodyBytes: Int) {
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
        let fromLoopback = HTTPServerHandler.isLoopback(context.channel.remoteAddress)
        let started = NIODeadline.now()
        tracker.begin()
        let loop = context.eventLoop
        let bound = NIOLoopBound((self, context), eventLoop: loop)
        pipeline.handle(request, fromLoopback: fromLoopback) { [tracker, pipeline] answer in
            let finish: @Sendable () -> Void = {
                let (handler, context) = bound.value
                handler.write(answer, for: head, context: context) {
                    tracker.end()
                }
                let elapsed = Double((NIODeadline.now() - started).nanoseconds) / 1e6
                let url = pipeline.configuration.redactor.redact(target: request.target)
                pipeline.journal.append(
                    .init(
                        method: request.method.rawValue, url: url, status: answer.response.status,
                        source: answer.source, milliseconds: elapsed))
                if pipeline.logger.logLevel <= .debug {
                    pipeline.logger.debug(
                        "\(request.method) \(url) -> \(answer.response.status) from \(answer.source.rawValue) in \(Int(elapsed.rounded())) ms"
                    )
                }
            }
            if loop.inEventLoop { finish() } else { loop.execute(finish) }
        }
    }

    private func write(
        _ answer: ProxyAnswer, for request: HTTPRequestHead, context: ChannelHandlerContext,
        done: @escaping @Sendable () -> Void
    ) {
        let response = answer.response
        let keepAlive = request.isKeepAlive
        let bodyless =
            request.method == .HEAD || response.status < 200 || response.status == 204 || response.status == 304
        var headers = NIOHTTP1.HTTPHeaders()
        headers.reserveCapacity(response.headers.count + 3)
        var hasLength = false
        for field in response.headers {
            let name = field.name
            if name.caseInsensitiveEquals("content-length") {
                // Kept in its place. A HEAD answer keeps the recorded length (the size a GET would get);
                // any other answer states the length of the body actually sent.
                if request.method == .HEAD {
                    headers.add(name: name, value: field.value)
                } else if !bodyless && !hasLength {
                    headers.add(name: name, value: String(response.body.count))
                }
                hasLength = true
                continue
            }
            if HopByHopHeaders.contains(name, in: response.headers) { continue }
            headers.add(name: name, value: field.value)
        }
        if !bodyless && !hasLength { headers.add(name: "Content-Length", value: String(response.body.count)) }
        headers.add(name: "X-Kakapo-Source", value: answer.source.rawValue)
        if !keepAlive { headers.add(name: "Connection", value: "close") }
        let status = HTTPResponseStatus(statusCode: response.status)
        context.write(
            wrapOutboundOut(.head(HTTPResponseHead(version: request.version, status: status, headers: headers))),
            promise: nil)
        if !bodyless && !response.body.isEmpty {
            let buffer = context.channel.allocator.buffer(bytes: response.body)
            context.write(wrapOutboundOut(.body(.byteBuffer(buffer))), promise: nil)
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
