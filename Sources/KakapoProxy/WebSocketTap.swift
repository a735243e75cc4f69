import KakapoEngine
import KakapoHTTP
import KakapoWebSocket
import NIOCore

/// Listens in on one end of a recorded WebSocket tunnel: placed before the `TunnelHandler` (above TLS, so
/// it sees plaintext), it passes every buffer on untouched and shows its bytes to the conversation's
/// `WebSocketRecorder`, which both taps share (both connections are on one event loop, which confines it).
/// Either connection closing ends the recording.
final class WebSocketTap: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    private let recorder: WebSocketRecorder
    private let side: WebSocketMessage.Sender

    init(recorder: WebSocketRecorder, side: WebSocketMessage.Sender) {
        self.recorder = recorder
        self.side = side
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if !recorder.isEnded {
            let buffer = unwrapInboundIn(data)
            buffer.withUnsafeReadableBytes { recorder.read($0, from: side) }
        }
        context.fireChannelRead(data)
    }

    func channelInactive(context: ChannelHandlerContext) {
        recorder.end(.connectionClosed)
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        // The channel went without a close reaching this handler (its pipeline torn down): same end.
        recorder.end(.connectionClosed)
    }
}
