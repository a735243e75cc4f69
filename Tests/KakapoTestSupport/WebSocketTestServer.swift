import NIOCore
import NIOHTTP1
import NIOPosix
import NIOWebSocket

/// What the test WebSocket servers share: SwiftNIO's server on 127.0.0.1 and a free port, answering an
/// upgrade `101` with the headers `accept` gives for its request, and handing the upgraded channel to
/// `upgraded`, which adds the server's frame handlers. Plain HTTP requests get 404.
public final class WebSocketTestServer: Sendable {
    private let group: MultiThreadedEventLoopGroup
    private let channel: any Channel
    /// The port it listens on.
    public let port: Int

    /// Starts a server on its own event loop.
    public static func start(
        accept: @escaping @Sendable (HTTPRequestHead) -> HTTPHeaders,
        upgraded: @escaping @Sendable (any Channel) throws -> Void
    ) async throws -> WebSocketTestServer {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let upgrader = NIOWebSocketServerUpgrader(
            shouldUpgrade: { channel, head in channel.eventLoop.makeSucceededFuture(accept(head)) },
            upgradePipelineHandler: { channel, _ in channel.eventLoop.makeCompletedFuture { try upgraded(channel) } })
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
        return WebSocketTestServer(group: group, channel: channel)
    }

    private init(group: MultiThreadedEventLoopGroup, channel: any Channel) {
        self.group = group
        self.channel = channel
        self.port = channel.localAddress?.port ?? 0
    }

    /// `http://127.0.0.1:PORT`, for `--upstream`.
    public var baseURL: String { "http://127.0.0.1:\(port)" }

    /// Stops listening and shuts its event loop down.
    public func stop() async {
        try? await channel.close()
        try? await group.shutdownGracefully()
    }
}

/// Answers a plain HTTP request 404.
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
