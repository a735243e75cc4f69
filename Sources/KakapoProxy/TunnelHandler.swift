import NIOCore

/// One end of a blind tunnel: what its channel reads is written to the partner's channel. Reading
/// pauses while the partner cannot take more, so a slow side slows the other instead of filling memory.
/// Both ends run on one event loop. With an idle timeout, the tunnel is closed (both ends) once neither
/// side has sent anything for that long; a transfer in either direction keeps it open.
final class TunnelHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny
    typealias OutboundIn = NIOAny
    typealias OutboundOut = NIOAny

    /// When either end last read something; shared by the two ends, which run on one event loop.
    private final class Activity {
        var last = NIODeadline.now()
    }

    private var partner: TunnelHandler?
    private var context: ChannelHandlerContext?
    private var readWaiting = false
    private let activity: Activity
    /// Set on one end only: it watches for the idle timeout.
    private let idleTimeout: TimeAmount?
    private var idleCheck: Scheduled<Void>?

    private init(activity: Activity, idleTimeout: TimeAmount?) {
        self.activity = activity
        self.idleTimeout = idleTimeout
    }

    /// Two ends that know each other; add the first to the client's channel and the second to the
    /// upstream's. `idleTimeout` nil keeps a quiet tunnel open until a side closes it.
    static func pair(idleTimeout: TimeAmount? = nil) -> (TunnelHandler, TunnelHandler) {
        let activity = Activity()
        let first = TunnelHandler(activity: activity, idleTimeout: idleTimeout)
        let second = TunnelHandler(activity: activity, idleTimeout: nil)
        first.partner = second
        second.partner = first
        return (first, second)
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        activity.last = .now()
        scheduleIdleCheck(context: context)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        idleCheck?.cancel()
        idleCheck = nil
        self.context = nil
        partner = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        activity.last = .now()
        partner?.context?.write(data, promise: nil)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        partner?.context?.flush()
    }

    func channelInactive(context: ChannelHandlerContext) {
        idleCheck?.cancel()
        idleCheck = nil
        partner?.context?.close(promise: nil)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        partner?.context?.close(promise: nil)
        context.close(promise: nil)
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable, let partner, partner.readWaiting {
            partner.readWaiting = false
            partner.context?.read()
        }
        context.fireChannelWritabilityChanged()
    }

    func read(context: ChannelHandlerContext) {
        if partner?.context?.channel.isWritable ?? false {
            context.read()
        } else {
            readWaiting = true
        }
    }

    /// Checks again when the tunnel would have been quiet for the idle timeout.
    private func scheduleIdleCheck(context: ChannelHandlerContext) {
        guard let idleTimeout, context.channel.isActive else { return }
        let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
        idleCheck = context.eventLoop.scheduleTask(deadline: activity.last + idleTimeout) {
            bound.value.checkIdle()
        }
    }

    private func checkIdle() {
        idleCheck = nil
        guard let context, let idleTimeout else { return }
        if NIODeadline.now() >= activity.last + idleTimeout {
            partner?.context?.close(promise: nil)
            context.close(promise: nil)
        } else {
            scheduleIdleCheck(context: context)
        }
    }
}
