import KakapoUpstream
import NIOCore

/// Opens a tunnel through an upstream proxy on a connection to it: sends `CONNECT host:port` (with
/// `Proxy-Authorization: Basic` when the proxy has credentials), reads the proxy's answer head (at most
/// 16 KiB, within the timeout) and succeeds on a 2xx; a refusal fails with `upstream-proxy-refused`. From
/// then on it passes bytes both ways untouched, and hands on any bytes that came after the answer's head
/// once the handler after it first reads.
final class UpstreamProxyHandshake: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = NIOAny

    /// The largest answer head read from the proxy.
    static let maximumHeadBytes = 16 << 10

    private let proxy: UpstreamProxy
    private let target: String
    private var promise: EventLoopPromise<Void>?
    private var head = ByteBuffer()
    /// Bytes after the answer's head, handed on at the first read after the tunnel is open.
    private var leftover: ByteBuffer?
    private var timeout: Scheduled<Void>?

    /// A handshake for a tunnel to `host:port` through `proxy`; `promise` hears how it ends.
    init(proxy: UpstreamProxy, host: String, port: Int, promise: EventLoopPromise<Void>) {
        self.proxy = proxy
        self.target = (host.contains(":") ? "[\(host)]" : host) + ":" + String(port)
        self.promise = promise
    }

    /// Sends the `CONNECT` (the connection is open) and gives the proxy `seconds` to answer.
    func start(context: ChannelHandlerContext, seconds: Double) {
        var request = "CONNECT \(target) HTTP/1.1\r\nHost: \(target)\r\n"
        if let authorization = proxy.basicAuthorization { request += "Proxy-Authorization: \(authorization)\r\n" }
        request += "\r\n"
        context.writeAndFlush(NIOAny(ByteBuffer(string: request)), promise: nil)
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        timeout = context.eventLoop.scheduleTask(in: .milliseconds(Int64(max(seconds, 0.001) * 1000))) {
            let (handshake, context) = bound.value
            handshake.fail(
                UpstreamProxyFailure.unreachable(handshake.proxy, reason: "no answer to CONNECT within \(seconds) s"),
                context: context)
        }
    }

    func handlerAdded(context: ChannelHandlerContext) {
        // The proxy's answer must be read whatever the channel's reading mode.
        context.read()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard promise != nil else {
            context.fireChannelRead(data)
            return
        }
        var bytes = unwrapInboundIn(data)
        head.writeBuffer(&bytes)
        let view = head.readableBytesView
        guard let end = view.firstRange(of: Array("\r\n\r\n".utf8)) else {
            if head.readableBytes > Self.maximumHeadBytes {
                fail(
                    UpstreamProxyFailure.unreachable(
                        proxy, reason: "its answer to CONNECT has a head larger than \(Self.maximumHeadBytes) bytes"),
                    context: context)
            }
            return
        }
        let headLength = end.upperBound - view.startIndex
        let statusLine = String(decoding: view.prefix { $0 != UInt8(ascii: "\r") }.prefix(200), as: UTF8.self)
        let parts = statusLine.split(separator: " ", maxSplits: 2)
        let status = parts.count >= 2 && parts[0].hasPrefix("HTTP/") ? Int(parts[1]) ?? 0 : 0
        guard (200..<300).contains(status) else {
            fail(
                status == 0
                    ? UpstreamProxyFailure.unreachable(proxy, reason: "it did not answer CONNECT with HTTP")
                    : UpstreamProxyFailure.refused(proxy, status: status, statusLine: statusLine),
                context: context)
            return
        }
        head.moveReaderIndex(forwardBy: headLength)
        if head.readableBytes > 0 { leftover = head }
        head = ByteBuffer()
        timeout?.cancel()
        let promise = self.promise
        self.promise = nil
        promise?.succeed()
    }

    func read(context: ChannelHandlerContext) {
        if promise == nil, let leftover {
            self.leftover = nil
            context.fireChannelRead(wrapInboundOut(leftover))
            context.fireChannelReadComplete()
        }
        context.read()
    }

    func channelInactive(context: ChannelHandlerContext) {
        fail(UpstreamProxyFailure.unreachable(proxy, reason: "it closed the connection"), context: context)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard promise != nil else {
            context.fireErrorCaught(error)
            return
        }
        fail(UpstreamProxyFailure.unreachable(proxy, reason: "\(error)"), context: context)
    }

    /// Fails the handshake (once) and closes the connection.
    private func fail(_ error: UpstreamError, context: ChannelHandlerContext) {
        guard let promise else { return }
        self.promise = nil
        timeout?.cancel()
        promise.fail(error)
        context.close(promise: nil)
    }
}
