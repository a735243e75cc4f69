import NIOCore
import NIOHTTP1
import NIOWebSocket

/// A real WebSocket server (SwiftNIO's) on 127.0.0.1 and a free port that talks first and in several
/// messages, for recording tests: it accepts the `chat.v1` subprotocol when offered, greets with
/// `{"type":"welcome"}` on open, answers `hello` with `hi there` and the binary `00 01 02 FF`, answers
/// `fragments` with `fragmented` sent in two frames, echoes other text prefixed `echo: ` and binary
/// as is, answers pings, answers `bye` by closing first (1000, `done`) and `close N` by closing first with
/// the code N however invalid (reason `gone`), and answers a client's close
/// with the same code; fragmented client messages are joined first. Plain HTTP requests get 404.
public final class WebSocketChatServer: Sendable {
    private let server: WebSocketTestServer
    /// The port it listens on.
    public var port: Int { server.port }

    /// Starts a server on its own event loop.
    public static func start() async throws -> WebSocketChatServer {
        let server = try await WebSocketTestServer.start(
            accept: { head in
                var headers = HTTPHeaders()
                let offered = head.headers["Sec-WebSocket-Protocol"].flatMap { $0.split(separator: ",") }
                if offered.contains(where: { $0.trimmingCharacters(in: .whitespaces) == "chat.v1" }) {
                    headers.add(name: "Sec-WebSocket-Protocol", value: "chat.v1")
                }
                return headers
            },
            upgraded: { channel in
                // Fragments joined, so a fragmented client message is answered whole.
                try channel.pipeline.syncOperations.addHandlers(
                    NIOWebSocketFrameAggregator(
                        minNonFinalFragmentSize: 0, maxAccumulatedFrameCount: 64, maxAccumulatedFrameSize: 1 << 20),
                    ChatHandler())
            })
        return WebSocketChatServer(server: server)
    }

    private init(server: WebSocketTestServer) { self.server = server }

    /// `http://127.0.0.1:PORT`, for `--upstream`.
    public var baseURL: String { server.baseURL }

    /// Stops listening.
    public func stop() async { await server.stop() }
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
            case _ where text.hasPrefix("close "):
                // `close N`: closes first with the code N as two bytes, whatever it is (0, 1005, 65535 may not
                // be sent: a broken peer's close), and the reason `gone`.
                closing = true
                var data = context.channel.allocator.buffer(capacity: 6)
                data.writeInteger(UInt16(truncatingIfNeeded: Int(text.dropFirst(6)) ?? 1000))
                data.writeString("gone")
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
