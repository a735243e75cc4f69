import NIOCore
import NIOHTTP1
import NIOPosix
import NIOWebSocket

/// A real WebSocket server (SwiftNIO's) on 127.0.0.1 and a free port that sends every text message back
/// prefixed with `echo: `; plain HTTP requests get 404.
public final class WebSocketEchoServer: Sendable {
    private let group: MultiThreadedEventLoopGroup
    private let channel: any Channel
    public let port: Int

    public static func start() async throws -> WebSocketEchoServer {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let upgrader = NIOWebSocketServerUpgrader(
            shouldUpgrade: { channel, _ in channel.eventLoop.makeSucceededFuture(HTTPHeaders()) },
            upgradePipelineHandler: { channel, _ in
                channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(EchoHandler()) }
            })
        let channel = try await ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline(
                        withServerUpgrade: (
                            upgraders: [upgrader],
                            completionHandler: { context in
                                // The HTTP handler of our own goes too once the connection speaks WebSocket.
                                let operations = context.pipeline.syncOperations
                                if let handler = try? operations.context(handlerType: NotFoundHandler.self) {
                                    operations.removeHandler(context: handler, promise: nil)
                                }
                            }
                        ))
                    try channel.pipeline.syncOperations.addHandler(NotFoundHandler())
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        return WebSocketEchoServer(group: group, channel: channel)
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

private final class EchoHandler: ChannelInboundHandler {
    typealias InboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        switch frame.opcode {
        case .text:
            var reply = context.channel.allocator.buffer(string: "echo: ")
            var payload = frame.unmaskedData
            reply.writeBuffer(&payload)
            context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .text, data: reply)), promise: nil)
        case .connectionClose:
            context.close(promise: nil)
        default:
            break
        }
    }
}

private final class NotFoundHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .end = unwrapInboundIn(data) else { return }
        let head = HTTPResponseHead(version: .http1_1, status: .notFound, headers: ["Content-Length": "0"])
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
    }
}
