import NIOCore
import NIOHTTP1
import NIOPosix
import NIOWebSocket

/// A real WebSocket server (SwiftNIO's) on 127.0.0.1 and a free port that talks first and in several
/// messages, for recording tests: it accepts the `chat.v1` subprotocol when offered, greets with
/// `{"type":"welcome"}` on open, answers `hello` with `hi there` and the binary `00 01 02 FF`, answers
/// `fragments` with `fragmented` sent in two frames, echoes other text prefixed `echo: ` and binary
/// as is, answers pings, answers `bye` by closing first (1000, `done`), and answers a client's close
/// with the same code; fragmented client messages are joined first. Plain HTTP requests get 404.
public final class WebSocketChatServer: Sendable {
    private let group: MultiThreadedEventLoopGroup
    private let channel: any Channel
    public let port: Int

    public static func start() async throws -> WebSocketChatServer {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let upgrader = NIOWebSocketServerUpgrader(
            shouldUpgrade: { channel, head in
                var headers = HTTPHeaders()
                let offered = head.headers["Sec-WebSocket-Protocol"].flatMap { $0.split(separator: ",") }
                if offered.contains(where: { $0.trimmingCharacters(in: .whitespaces) == "chat.v1" }) {
                    headers.add(name: "Sec-WebSocket-Protocol", value: "chat.v1")
                }
                return channel.eventLoop.makeSucceededFuture(headers)
            },
            upgradePipelineHandler: { channel, _ in
                channel.eventLoop.makeCompletedFuture {
                    // Fragments joined, so a fragmented client message is answered whole.
                    try channel.pipeline.syncOperations.addHandlers(
                        NIOWebSocketFrameAggregator(
                            minNonFinalFragmentSize: 0, maxAccumulatedFrameCount: 64,
                            maxAccumulatedFrameSize: 1 << 20),
                        ChatHandler())
                }
            })
        let channel = try await ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline(
                        withServerUpgrade: (
                            upgraders: [upgrader],
                            completionHandler: { context in
                                let operations = context.pipeline.syncOperations
                                if let handler = try? operations.context(handlerType: ChatNotFoundHandler.self) {
                                    operations.removeHandler(context: handler, promise: nil)
                                }
                            }
                        ))
                    try channel.pipeline.syncOperations.addHandler(ChatNotFoundHandler())
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        return WebSocketChatServer(group: group, channel: channel)
    }

    private init(group: MultiThreadedEventLoopGroup, channel: any Channel) {
        self.group = group
        self.channel = channel
        self.port = channel.localAddress?.port ?? 0
    }

    public var baseURL: String { "http://127.0.0.1:\(port)" }

    public func stop() async {
        try? await channel.close()
        try? await group.shutdownGracefully()
    }
}

private final class ChatHandler: ChannelInboundHandler {
    typealias InboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    private var closing = false

    func handlerAdded(context: ChannelHandlerContext) {
        send(.text, "{\"type\":\"welcome\"}", context: context)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        var payload = frame.unmaskedData
        switch frame.opcode {
        case .text:
            let text = payload.readString(length: payload.readableBytes) ?? ""
            switch text {
            case "hello":
                send(.text, "hi there", context: context)
                let binary = context.channel.allocator.buffer(bytes: [0, 1, 2, 255])
                context.writeAndFlush(
                    wrapOutboundOut(WebSocketFrame(fin: true, opcode: .binary, data: binary)), promise: nil)
            case "fragments":
                let first = context.channel.allocator.buffer(string: "frag")
                let second = context.channel.allocator.buffer(string: "mented")
                context.write(wrapOutboundOut(WebSocketFrame(fin: false, opcode: .text, data: first)), promise: nil)
                context.writeAndFlush(
                    wrapOutboundOut(WebSocketFrame(fin: true, opcode: .continuation, data: second)), promise: nil)
            case "bye":
                closing = true
                var data = context.channel.allocator.buffer(capacity: 6)
                data.write(webSocketErrorCode: .normalClosure)
                data.writeString("done")
                context.writeAndFlush(
                    wrapOutboundOut(WebSocketFrame(fin: true, opcode: .connectionClose, data: data)), promise: nil)
            default:
                send(.text, "echo: " + text, context: context)
            }
        case .binary:
            context.writeAndFlush(
                wrapOutboundOut(WebSocketFrame(fin: true, opcode: .binary, data: payload)), promise: nil)
        case .ping:
            context.writeAndFlush(
                wrapOutboundOut(WebSocketFrame(fin: true, opcode: .pong, data: payload)), promise: nil)
        case .connectionClose:
            if closing {
                // Our close was answered.
                context.close(promise: nil)
                return
            }
            closing = true
            let echoed = payload.readSlice(length: min(2, payload.readableBytes)) ?? ByteBuffer()
            context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .connectionClose, data: echoed)))
                .whenComplete { [channel = context.channel] _ in channel.close(promise: nil) }
        default:
            break
        }
    }

    private func send(_ opcode: WebSocketOpcode, _ text: String, context: ChannelHandlerContext) {
        let buffer = context.channel.allocator.buffer(string: text)
        context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: opcode, data: buffer)), promise: nil)
    }
}

private final class ChatNotFoundHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .end = unwrapInboundIn(data) else { return }
        let head = HTTPResponseHead(version: .http1_1, status: .notFound, headers: ["Content-Length": "0"])
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
    }
}
