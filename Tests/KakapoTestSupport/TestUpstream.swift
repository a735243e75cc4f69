import KakapoHTTP
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix

/// A real HTTP server on 127.0.0.1 and a free port, standing in for the API that Kakapo records.
/// Each request is answered by `handler` and remembered in `received`.
public final class TestUpstream: Sendable {
    /// What the upstream does with a request.
    public enum Reply: Sendable {
        /// Answers with these headers and body (a `Content-Length` is added unless present).
        case response(HTTP.Response)
        /// Answers with `Transfer-Encoding: chunked`, one chunk per element.
        case chunked(status: Int, headers: HTTP.Headers, chunks: [[UInt8]])
        /// Closes the connection without answering.
        case close
        /// Promises `declared` bytes, sends `sent`, and closes the connection: a reset mid-body.
        case truncated(declared: Int, sent: [UInt8])
        /// Answers 200 with these headers and chunked framing, sending the head at once and each chunk
        /// `gap` seconds after the one before (server-sent events).
        case paced(headers: HTTP.Headers, chunks: [[UInt8]], gap: Double)
        /// Answers 200 with `size` bytes made on the fly (byte `i` is `i % 256`), each piece written once
        /// the one before has reached the socket, so a slow reader slows it down; with a `Content-Length`
        /// or chunked. `generatedBytes` counts what was written.
        case generated(size: Int, announcesLength: Bool)
        /// Gives `reply` after `seconds`, without blocking the server.
        indirect case delayed(seconds: Double, reply: Reply)
    }

    public typealias Handler = @Sendable (HTTP.Request) -> Reply

    private let group: MultiThreadedEventLoopGroup
    private let channel: any Channel
    private let log: NIOLockedValueBox<[HTTP.Request]>
    private let sends: NIOLockedValueBox<[ContinuousClock.Instant]>
    private let generated: NIOLockedValueBox<Int>
    public let port: Int

    /// Starts the server.
    public static func start(_ handler: @escaping Handler) async throws -> TestUpstream {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let log = NIOLockedValueBox<[HTTP.Request]>([])
        let sends = NIOLockedValueBox<[ContinuousClock.Instant]>([])
        let generated = NIOLockedValueBox(0)
        let channel = try await ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                    try channel.pipeline.syncOperations.addHandler(
                        UpstreamHandler(handler: handler, log: log, sends: sends, generated: generated))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        return TestUpstream(group: group, channel: channel, log: log, sends: sends, generated: generated)
    }

    private init(
        group: MultiThreadedEventLoopGroup, channel: any Channel, log: NIOLockedValueBox<[HTTP.Request]>,
        sends: NIOLockedValueBox<[ContinuousClock.Instant]>, generated: NIOLockedValueBox<Int>
    ) {
        self.group = group
        self.channel = channel
        self.log = log
        self.sends = sends
        self.generated = generated
        self.port = channel.localAddress?.port ?? 0
    }

    public var baseURL: String { "http://127.0.0.1:\(port)" }

    /// When each chunk of a `.paced` answer was written, in order.
    public var pacedSends: [ContinuousClock.Instant] { sends.withLockedValue { $0 } }

    /// How many body bytes of `.generated` answers have been written to sockets so far.
    public var generatedBytes: Int { generated.withLockedValue { $0 } }

    /// Every request received so far, in order.
    public var received: [HTTP.Request] { log.withLockedValue { $0 } }

    /// Stops the server; later connections are refused.
    public func stop() async {
        try? await channel.close()
        try? await group.shutdownGracefully()
    }
}

final class UpstreamHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    let handler: TestUpstream.Handler
    let log: NIOLockedValueBox<[HTTP.Request]>
    let sends: NIOLockedValueBox<[ContinuousClock.Instant]>
    let generated: NIOLockedValueBox<Int>
    var head: HTTPRequestHead?
    var body: [UInt8] = []
    var bodyCount = 0
    /// Request bodies larger than this are counted, not kept whole.
    static let keptBodyBytes = 16 << 20

    init(
        handler: @escaping TestUpstream.Handler, log: NIOLockedValueBox<[HTTP.Request]>,
        sends: NIOLockedValueBox<[ContinuousClock.Instant]>, generated: NIOLockedValueBox<Int>
    ) {
        self.sends = sends
        self.generated = generated
        self.handler = handler
        self.log = log
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            self.head = head
            body = []
            bodyCount = 0
        case .body(let buffer):
            // A huge upload is counted, not kept: the request then says how large it was.
            bodyCount += buffer.readableBytes
            if body.count < UpstreamHandler.keptBodyBytes { body.append(contentsOf: buffer.readableBytesView) }
        case .end:
            guard let head else { return }
            var headers = HTTP.Headers()
            for (name, value) in head.headers { headers.add(name: name, value: value) }
            if bodyCount > UpstreamHandler.keptBodyBytes {
                headers.add(name: "X-Test-Body-Bytes", value: String(bodyCount))
            }
            let request = HTTP.Request(
                method: HTTP.Method(head.method.rawValue), target: head.uri, headers: headers, body: body)
            log.withLockedValue { $0.append(request) }
            reply(handler(request), to: head, context: context)
        }
    }

    func reply(_ reply: TestUpstream.Reply, to head: HTTPRequestHead, context: ChannelHandlerContext) {
        switch reply {
        case .delayed(let seconds, let later):
            let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            context.eventLoop.scheduleTask(in: .milliseconds(Int64(seconds * 1000))) {
                let (handler, context) = bound.value
                handler.reply(later, to: head, context: context)
            }
        case .close:
            context.close(promise: nil)
        case .truncated(let declared, let sent):
            let head = HTTPResponseHead(
                version: .http1_1, status: .ok, headers: ["Content-Length": String(declared)])
            context.write(wrapOutboundOut(.head(head)), promise: nil)
            let channel = context.channel
            context.writeAndFlush(wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(bytes: sent)))))
                .whenComplete { _ in channel.close(promise: nil) }
        case .response(let response):
            var headers = NIOHTTP1.HTTPHeaders(response.headers.map { ($0.name, $0.value) })
            if !headers.contains(name: "content-length") && response.status != 204 && response.status != 304 {
                headers.add(name: "Content-Length", value: String(response.body.count))
            }
            write(status: response.status, headers: headers, chunks: [response.body], context: context)
        case .paced(let fields, let chunks, let gap):
            let head = HTTPResponseHead(
                version: .http1_1, status: .ok, headers: NIOHTTP1.HTTPHeaders(fields.map { ($0.name, $0.value) }))
            context.writeAndFlush(wrapOutboundOut(.head(head)), promise: nil)
            let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            for (index, chunk) in chunks.enumerated() {
                context.eventLoop.scheduleTask(in: .milliseconds(Int64(gap * 1000) * Int64(index + 1))) {
                    let (handler, context) = bound.value
                    let part = context.channel.allocator.buffer(bytes: chunk)
                    handler.sends.withLockedValue { $0.append(.now) }
                    context.writeAndFlush(handler.wrapOutboundOut(.body(.byteBuffer(part))), promise: nil)
                    if index == chunks.count - 1 {
                        context.writeAndFlush(handler.wrapOutboundOut(.end(nil)), promise: nil)
                    }
                }
            }
        case .generated(let size, let announcesLength):
            let headers: NIOHTTP1.HTTPHeaders =
                announcesLength
                ? ["Content-Type": "application/octet-stream", "Content-Length": String(size)]
                : ["Content-Type": "application/octet-stream", "Transfer-Encoding": "chunked"]
            context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .ok, headers: headers))))
                .whenComplete { _ in }
            writeGenerated(from: 0, size: size, context: context)
        case .chunked(let status, let fields, let chunks):
            var headers = NIOHTTP1.HTTPHeaders(fields.map { ($0.name, $0.value) })
            headers.add(name: "Transfer-Encoding", value: "chunked")
            write(status: status, headers: headers, chunks: chunks, context: context)
        }
    }

    /// 256 KiB of 0, 1, ... 255 repeated: every piece of a generated body starts at a multiple of 256.
    static let pattern = ByteBuffer(bytes: (0..<(256 << 10)).map { UInt8(truncatingIfNeeded: $0) })

    /// Writes bytes `offset..<size` of a generated body, 256 KiB at a time, each after the last one left.
    func writeGenerated(from offset: Int, size: Int, context: ChannelHandlerContext) {
        guard offset < size else {
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            return
        }
        let count = min(UpstreamHandler.pattern.readableBytes, size - offset)
        let buffer = UpstreamHandler.pattern.getSlice(at: 0, length: count)!
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        let generated = self.generated
        context.writeAndFlush(wrapOutboundOut(.body(.byteBuffer(buffer)))).whenComplete { result in
            guard case .success = result else { return }
            generated.withLockedValue { $0 += count }
            let (handler, context) = bound.value
            handler.writeGenerated(from: offset + count, size: size, context: context)
        }
    }

    func write(status: Int, headers: NIOHTTP1.HTTPHeaders, chunks: [[UInt8]], context: ChannelHandlerContext) {
        let head = HTTPResponseHead(version: .http1_1, status: HTTPResponseStatus(statusCode: status), headers: headers)
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        for chunk in chunks where !chunk.isEmpty {
            context.write(
                wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(bytes: chunk)))), promise: nil)
        }
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
    }
}
