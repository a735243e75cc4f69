import KakapoEngine
import KakapoRouter
import NIOCore

/// The first handler of a connection's HTTP handlers: it reads the client's first bytes and, when they are
/// HTTP/2's connection preface (`PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n`: h2c with prior knowledge, or h2 chosen by
/// ALPN), hands the connection to HTTP/2; anything else goes on to the HTTP/1.1 handlers after it. It holds
/// at most the preface's 24 bytes, and steps aside once it has decided, so an HTTP/1.1 request pays one
/// comparison of a few bytes. A client that sends part of the preface and stops is closed by the
/// connection's timeouts, like any unfinished request.
final class HTTP2PrefaceSniffer: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    /// What every HTTP/2 connection starts with (RFC 9113 3.4).
    static let preface = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)

    /// Sets the connection up for HTTP/2 (the HTTP/1.1 handlers go, HTTP/2's come last in the pipeline), or
    /// nil when the server speaks HTTP/1.1 only: a preface is then answered 505.
    private let startHTTP2: ((ChannelHandlerContext) throws -> Void)?
    /// Bytes read so far that are a beginning of the preface.
    private var held: ByteBuffer?
    private var decided = false

    init(startHTTP2: ((ChannelHandlerContext) throws -> Void)?) {
        self.startHTTP2 = startHTTP2
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !decided else {
            context.fireChannelRead(data)
            return
        }
        var bytes = unwrapInboundIn(data)
        if var held {
            held.writeBuffer(&bytes)
            bytes = held
            self.held = nil
        }
        let compared = min(bytes.readableBytes, Self.preface.count)
        let matches = bytes.readableBytesView.prefix(compared).elementsEqual(Self.preface.prefix(compared))
        if matches && compared < Self.preface.count {
            // Too few bytes to tell yet (HTTP/1.1 methods differ from "PRI" at once, so only a preface waits).
            held = bytes
            return
        }
        decided = true
        if matches {
            guard let startHTTP2 else {
                refuseHTTP2(context: context)
                return
            }
            do {
                try startHTTP2(context)
            } catch {
                context.close(promise: nil)
                return
            }
        }
        // The handlers after this one (HTTP/1.1's, or HTTP/2's just added) get these bytes and all that follow.
        context.fireChannelRead(wrapInboundOut(bytes))
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
    }

    /// 505 in HTTP/1.1 (what a client that tried prior knowledge can log), then close: this server was
    /// started without HTTP/2.
    private func refuseHTTP2(context: ChannelHandlerContext) {
        let body = ErrorBody.error("this server speaks HTTP/1.1 only (HTTP/2 is off)")
        var bytes = ByteBuffer(string: "HTTP/1.1 505 HTTP Version Not Supported\r\n")
        bytes.writeString("Content-Type: application/json\r\nContent-Length: \(body.count)\r\n")
        bytes.writeString("X-Kakapo-Source: error\r\nConnection: close\r\n\r\n")
        bytes.writeBytes(body)
        let channel = context.channel
        context.writeAndFlush(NIOAny(bytes)).whenComplete { _ in channel.close(promise: nil) }
    }
}
