import Logging
import NIOCore

#if canImport(Glibc)
    import Glibc
#else
    import Darwin
#endif

/// On the listening channel: when accepting fails for want of resources (out of file descriptors, or
/// memory), stops watching the socket for a moment instead of trying again at once. NIO's
/// `AcceptBackoffHandler` is not enough: it delays the next read request, but an accept that fails
/// leaves the current one registered, so the level-triggered poll wakes the loop again at once and it
/// spins at a whole core while new clients wait.
final class AcceptPauseHandler: ChannelInboundHandler {
    typealias InboundIn = any Channel
    typealias InboundOut = any Channel

    private let pause: TimeAmount
    private let logger: Logger
    private var paused = false

    init(pause: TimeAmount = .milliseconds(200), logger: Logger) {
        self.pause = pause
        self.logger = logger
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard let failure = error as? IOError, [EMFILE, ENFILE, ENOBUFS, ENOMEM].contains(failure.errnoCode) else {
            context.fireErrorCaught(error)
            return
        }
        guard !paused, let options = context.channel.syncOptions else { return }
        paused = true
        logger.warning("cannot accept connections (\(failure)); trying again every \(pause.nanoseconds / 1_000_000) ms")
        try? options.setOption(.autoRead, value: false)
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        context.eventLoop.scheduleTask(in: pause) {
            let (handler, context) = bound.value
            handler.paused = false
            try? context.channel.syncOptions?.setOption(.autoRead, value: true)
        }
    }
}
