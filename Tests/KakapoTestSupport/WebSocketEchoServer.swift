import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOWebSocket

/// A real WebSocket server (SwiftNIO's) on 127.0.0.1 and a free port that sends every text message back
/// prefixed with `echo: `; plain HTTP requests get 404. With `namingSubprotocol`, its `101` names the first
/// subprotocol the client offers, and it answers a client's close with the same code and reason.
public final class WebSocketEchoServer: Sendable {
    private let group: MultiThreadedEventLoopGroup
    private let channel: any Channel
    public let port: Int

    public static func start(namingSubprotocol: Bool = false) async throws -> WebSocketEchoServer {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let upgrader = NIOWebSocketServerUpgrader(
            shouldUpgrade: { channel, head in
                var headers = HTTPHeaders()
                let offered = head.headers["Sec-WebSocket-Protocol"].flatMap { $0.split(separator: ",") }
                if namingSubprotocol, let first = offered.first {
                    headers.add(name: "Sec-WebSocket-Protocol", value: first.trimmingCharacters(in: .whitespaces))
                }
                return channel.eventLoop.makeSucceededFuture(headers)
            },
            upgradePipelineHandler: { channel, _ in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(EchoHandler(answersClose: namingSubprotocol))
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

    /// Whether a client's close is answered with its own code and reason before the connection closes.
    let answersClose: Bool

    init(answersClose: Bool) { self.answersClose = answersClose }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        switch frame.opcode {
        case .text:
            var reply = context.channel.allocator.buffer(string: "echo: ")
            var payload = frame.unmaskedData
            reply.writeBuffer(&payload)
            context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .text, data: reply)), promise: nil)
        case .connectionClose:
            guard answersClose else {
                context.close(promise: nil)
                return
            }
            context.writeAndFlush(
                wrapOutboundOut(WebSocketFrame(fin: true, opcode: .connectionClose, data: frame.unmaskedData))
            ).whenComplete { [channel = context.channel] _ in channel.close(promise: nil) }
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
