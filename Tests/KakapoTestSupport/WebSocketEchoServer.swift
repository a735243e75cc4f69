import Foundation
import NIOCore
import NIOHTTP1
import NIOWebSocket

/// A real WebSocket server (SwiftNIO's) on 127.0.0.1 and a free port that sends every text message back
/// prefixed with `echo: `; plain HTTP requests get 404. With `namingSubprotocol`, its `101` names the first
/// subprotocol the client offers, and it answers a client's close with the same code and reason.
public final class WebSocketEchoServer: Sendable {
    private let server: WebSocketTestServer
    /// The port it listens on.
    public var port: Int { server.port }

    /// Starts a server on its own event loop.
    public static func start(namingSubprotocol: Bool = false) async throws -> WebSocketEchoServer {
        let server = try await WebSocketTestServer.start(
            accept: { head in
                var headers = HTTPHeaders()
                let offered = head.headers["Sec-WebSocket-Protocol"].flatMap { $0.split(separator: ",") }
                if namingSubprotocol, let first = offered.first {
                    headers.add(name: "Sec-WebSocket-Protocol", value: first.trimmingCharacters(in: .whitespaces))
                }
                return headers
            },
            upgraded: { channel in
                try channel.pipeline.syncOperations.addHandler(EchoHandler(answersClose: namingSubprotocol))
            })
        return WebSocketEchoServer(server: server)
    }

    private init(server: WebSocketTestServer) { self.server = server }

    /// `http://127.0.0.1:PORT`, for `--upstream`.
    public var baseURL: String { server.baseURL }

    /// Stops listening.
    public func stop() async { await server.stop() }
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
