import NIOCore

/// Both time limits of a client connection, on one timer: a request not fully received within
/// `requestDeadline` of its first byte closes the connection (a client that dribbles a byte at a time,
/// slowloris, cannot hold it), and a connection that sends nothing for `idleTimeout` gets an `Idle`
/// event, which `HTTPServerHandler` turns into a close unless an answer is still on its way.
///
/// Sits before the HTTP decoder; `HTTPServerHandler` tells it when a whole request has arrived. A read
/// costs a clock reading and nothing else: the timer is not moved per request. It fires at least once
/// per `requestDeadline`, so a request that starts after it was set is still checked on time.
final class ConnectionTimeoutHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    /// Sent down the pipeline when the connection has been quiet for the idle timeout.
    struct Idle: Sendable {}

    /// How long the connection may send nothing; a tunnel that replaces this handler keeps the limit.
    let idleTimeout: TimeAmount
    private let requestDeadline: TimeAmount
    private var lastRead = NIODeadline.now()
    /// When the first byte of the request being read arrived; nil between requests.
    private var requestStarted: NIODeadline?
    private var timer: Scheduled<Void>?
    private var context: ChannelHandlerContext?

    init(idleTimeout: TimeAmount, requestDeadline: TimeAmount) {
        self.idleTimeout = idleTimeout
        self.requestDeadline = requestDeadline
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        if context.channel.isActive { start(context: context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        start(context: context)
        context.fireChannelActive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
        self.context = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let now = NIODeadline.now()
        lastRead = now
        if requestStarted == nil { requestStarted = now }
        context.fireChannelRead(data)
    }

    /// A whole request has been read: the next byte starts a new deadline.
    func requestReceived() {
        requestStarted = nil
    }

    func channelInactive(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
        context.fireChannelInactive()
    }

    private func start(context: ChannelHandlerContext) {
        guard timer == nil else { return }
        lastRead = .now()
        schedule(from: lastRead, context: context)
    }

    /// The next check: when the connection would become idle or the request's deadline pass, and never
    /// later than one deadline from now (a request may start in the meantime).
    private func schedule(from now: NIODeadline, context: ChannelHandlerContext) {
        let next = min(lastRead + idleTimeout, (requestStarted ?? now) + requestDeadline)
        let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
        timer = context.eventLoop.scheduleTask(deadline: next) { bound.value.check() }
    }

    private func check() {
        timer = nil
        guard let context else { return }
        let now = NIODeadline.now()
        if let requestStarted, now >= requestStarted + requestDeadline {
            context.close(promise: nil)
            return
        }
        if now >= lastRead + idleTimeout {
            // Told once per idle period while it lasts.
            lastRead = now
            context.fireUserInboundEventTriggered(Idle())
        }
        if self.context != nil, context.channel.isActive { schedule(from: now, context: context) }
    }
}
