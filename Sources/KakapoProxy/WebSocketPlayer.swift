import KakapoEngine
import KakapoHTTP
import KakapoWebSocket
import NIOCore
import NIOWebSocket

/// Plays the server side of a WebSocket that Kakapo answered itself (`WebSocketServing`), after NIO's frame
/// decoder and encoder: it joins the client's fragments into whole messages (at most `limits.messageBytes`),
/// answers pings, echoes the client's close, fails the connection on a protocol error (1002; a message too
/// big 1009, text that is not UTF-8 1007), and does what the `WebSocketServerSide` says, in order.
///
/// The side's sends and closes wait in a FIFO of deadlines that never go backwards, with one timer for the
/// head, all on the channel's event loop, so a late timer never lets a later message overtake an earlier
/// one. A conversation may stay silent for as long as both ends like, up to the idle timeout (nothing sent
/// either way), as a tunnel does.
///
/// Backpressure: due actions are written only while the channel is writable, at most `batchFrames` frames or
/// `batchBytes` bytes per event loop turn (a million due messages neither fill memory nor hold the loop), and
/// the client is not read while the channel is not writable (a client that sends pings or messages without
/// reading the answers gets no more answers queued than the write buffer's high water mark and a read's worth).
final class WebSocketPlayer: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = WebSocketFrame
    typealias OutboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    /// The most frames written in one turn of the event loop before the rest is left for the next.
    static let batchFrames = 64
    /// The most payload bytes written in one turn of the event loop (one frame may exceed it alone).
    static let batchBytes = 256 * 1024
    /// The pause between batches: long enough that the event loop polls its sockets in between.
    static let batchPause = TimeAmount.microseconds(50)

    /// How big and how long a played conversation may get.
    struct Limits {
        /// The largest message from the client, fragments joined, in bytes.
        var messageBytes: Int
        /// Closed when nothing was sent either way for this long; nil for never.
        var idleTimeout: TimeAmount?
        /// How long to wait for the client's answer to a close before dropping the connection.
        var closeTimeout: TimeAmount = .seconds(5)
    }

    private let side: any WebSocketServerSide
    private let limits: Limits
    /// Logs and journals a client message the side did not expect (`WebSocketAction.miss`).
    private let miss: (String) -> Void
    private var context: ChannelHandlerContext?

    /// The side's sends and closes still to do, deadlines never earlier than the one before.
    private var pending = CircularBuffer<(deadline: NIODeadline, action: WebSocketAction)>()
    private var lastDeadline = NIODeadline.uptimeNanoseconds(0)
    private var timer: Scheduled<Void>?
    private var timerDeadline: NIODeadline?

    /// The message being joined from fragments: its first frame's opcode and the bytes so far.
    private var partial: (opcode: WebSocketOpcode, bytes: ByteBuffer)?
    private var closeSent = false
    private var closeReceived = false
    /// Set once the connection is being dropped: nothing more is read or sent.
    private var failed = false
    private var lastActivity = NIODeadline.now()
    private var idleTimer: Scheduled<Void>?
    private var closeTimer: Scheduled<Void>?
    /// A read the channel asked for while it was not writable, done once it is again.
    private var readHeld = false
    /// A `runDue` already queued on the event loop for the next batch.
    private var batchQueued = false

    init(side: any WebSocketServerSide, limits: Limits, miss: @escaping (String) -> Void) {
        self.side = side
        self.limits = limits
        self.miss = miss
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        lastActivity = .now()
        scheduleIdleCheck()
        if context.channel.isActive { perform(side.opened()) }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        stopTimers()
        self.context = nil
    }

    func channelInactive(context: ChannelHandlerContext) {
        stopTimers()
        pending.removeAll()
        context.fireChannelInactive()
    }

    func read(context: ChannelHandlerContext) {
        // Reading waits while the client does not take what was written: each message read may add answers.
        guard context.channel.isWritable else {
            readHeld = true
            return
        }
        context.read()
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable {
            if readHeld {
                readHeld = false
                context.read()
            }
            runDue()
        }
        context.fireChannelWritabilityChanged()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !failed else { return }
        lastActivity = .now()
        let frame = unwrapInboundIn(data)
        // RFC 6455 5.1 and 5.2: a client masks every frame, and without an extension no reserved bit is set.
        guard frame.maskKey != nil else { return fail(.protocolError, "client frames must be masked") }
        guard frame.reservedBits.isEmpty else { return fail(.protocolError, "reserved bits set without an extension") }
        switch frame.opcode {
        case .ping:
            if !closeSent { send(WebSocketFrame(fin: true, opcode: .pong, data: frame.unmaskedData), flush: true) }
        case .pong:
            break
        case .connectionClose:
            receivedClose(frame.unmaskedData)
        case .text, .binary:
            guard partial == nil else { return fail(.protocolError, "a new message started inside a fragmented one") }
            partial = (frame.opcode, context.channel.allocator.buffer(capacity: 0))
            append(frame)
        case .continuation:
            guard partial != nil else {
                return fail(.protocolError, "a continuation frame with no message to continue")
            }
            append(frame)
        default:
            // The number, not NIO's type name: the reason goes on the wire.
            fail(.protocolError, "unknown opcode \(Self.opcodeNumber(frame.opcode))")
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // The frame decoder's errors: a frame over the size limit, or a malformed control frame.
        switch error as? NIOWebSocketError {
        case .invalidFrameLength?: fail(.messageTooLarge, "frame too big")
        case .some: fail(.protocolError, "malformed frame")
        case nil: drop()
        }
    }

    // MARK: Client messages

    private func append(_ frame: WebSocketFrame) {
        guard case (let opcode, var bytes)? = partial else { return }
        // Out of `partial` before writing, so the buffer has one owner and grows in place: a copy per
        // fragment would make a flood of one-byte continuation frames cost the square of their count.
        partial = nil
        var data = frame.unmaskedData
        guard data.readableBytes <= limits.messageBytes - bytes.readableBytes else {
            return fail(.messageTooLarge, "message over \(limits.messageBytes) bytes")
        }
        bytes.writeBuffer(&data)
        guard frame.fin else {
            partial = (opcode, bytes)
            return
        }
        let payload: WebSocketMessage.Payload
        if opcode == .text {
            guard let text = String(validating: bytes.readableBytesView, as: UTF8.self) else {
                return fail(.dataInconsistentWithMessage, "a text message that is not UTF-8")
            }
            payload = .text(text)
        } else {
            payload = .binary(Array(bytes.readableBytesView))
        }
        // After Kakapo's close, the client may still send what it had on the way; it is not part of the play.
        if !closeSent { perform(side.received(payload)) }
    }

    private func receivedClose(_ data: ByteBuffer) {
        closeReceived = true
        var data = data
        var code: WebSocketErrorCode?
        if data.readableBytes == 1 { return fail(.protocolError, "a close frame with a one-byte body") }
        if data.readableBytes >= 2 {
            guard let number = data.readInteger(as: UInt16.self), Self.isValidReceivedCode(Int(number)) else {
                return fail(.protocolError, "a close code that may not be sent")
            }
            code = WebSocketErrorCode(codeNumber: Int(number))
            guard String(validating: data.readableBytesView, as: UTF8.self) != nil else {
                return fail(.dataInconsistentWithMessage, "a close reason that is not UTF-8")
            }
        }
        pending.removeAll()
        timer?.cancel()
        timer = nil
        guard !closeSent, let context else { return drop() }
        // RFC 6455 5.5.1: answer with a close, echoing the code, then end the connection.
        closeSent = true
        var echo = context.channel.allocator.buffer(capacity: 2)
        if let code { echo.write(webSocketErrorCode: code) }
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .connectionClose, data: echo)))
            .whenComplete { _ in channel.close(promise: nil) }
        scheduleCloseTimeout()
    }

    /// `opcode`'s number as RFC 6455 5.2 writes it (NIO's description names its own type).
    static func opcodeNumber(_ opcode: WebSocketOpcode) -> Int {
        Int(UInt8(webSocketOpcode: opcode))
    }

    /// Codes a peer may send (RFC 6455 7.4.1, and the IANA registry's 1012 to 1014): 1005, 1006 and 1015
    /// never go on the wire, and 1016 to 2999 are not assigned.
    static func isValidReceivedCode(_ code: Int) -> Bool {
        (1000...1014).contains(code) && ![1004, 1005, 1006].contains(code) || (3000...4999).contains(code)
    }

    // MARK: The side's actions

    private func perform(_ actions: [WebSocketAction]) {
        let now = NIODeadline.now()
        for action in actions {
            switch action {
            case .miss(let description):
                // Journaled at once: a client that leaves before the close still counts as a miss.
                miss(description)
            case .send(_, let after), .close(_, _, let after):
                let deadline = max(now + Self.timeAmount(after), lastDeadline)
                lastDeadline = deadline
                pending.append((deadline, action))
            }
        }
        runDue()
    }

    /// Does the actions whose time has come, a batch per event loop turn and only while the channel is
    /// writable (`channelWritabilityChanged` resumes), then sets the timer for the next one.
    private func runDue() {
        guard let context, !failed else { return }
        let now = NIODeadline.now()
        var wrote = false
        var frames = 0
        var bytes = 0
        var more = false
        while let head = pending.first, head.deadline <= now, !closeSent {
            guard context.channel.isWritable else { break }
            guard frames < Self.batchFrames, bytes < Self.batchBytes else {
                more = true
                break
            }
            pending.removeFirst()
            wrote = true
            frames += 1
            switch head.action {
            case .send(let payload, _):
                let opcode: WebSocketOpcode = payload.isText ? .text : .binary
                let data = context.channel.allocator.buffer(bytes: payload.bytes)
                bytes += data.readableBytes
                send(WebSocketFrame(fin: true, opcode: opcode, data: data), flush: false)
            case .close(let code, let reason, _):
                sendClose(code: code, reason: reason)
            case .miss:
                break
            }
        }
        if closeSent { pending.removeAll() }
        if wrote { context.flush() }
        // Queued after the flush: the pause counts from the batch's end, not its middle.
        if more { return queueBatch(context) }
        // Due actions left behind wait for the next batch or for writability, not for a timer.
        guard let next = pending.first?.deadline, next > now else { return }
        guard timerDeadline != next else { return }
        timer?.cancel()
        timerDeadline = next
        let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
        timer = context.eventLoop.scheduleTask(deadline: next) {
            let player = bound.value
            player.timer = nil
            player.timerDeadline = nil
            player.runDue()
        }
    }

    /// Runs the next batch on a later turn of the event loop, so other connections' work goes between. A
    /// task queued with `execute` would not do: NIO runs tasks queued by tasks before it looks at I/O again,
    /// so the next batch is a timer `batchPause` ahead, which sends the loop back to its selector first.
    private func queueBatch(_ context: ChannelHandlerContext) {
        guard !batchQueued else { return }
        batchQueued = true
        let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
        context.eventLoop.scheduleTask(in: Self.batchPause) {
            let player = bound.value
            player.batchQueued = false
            player.runDue()
        }
    }

    private func send(_ frame: WebSocketFrame, flush: Bool) {
        guard let context else { return }
        lastActivity = .now()
        if flush {
            context.writeAndFlush(wrapOutboundOut(frame), promise: nil)
        } else {
            context.write(wrapOutboundOut(frame), promise: nil)
        }
    }

    /// Kakapo's close: the client answers it with its own, and the connection ends then (or after
    /// `closeTimeout` if it never does).
    private func sendClose(code: Int?, reason: String) {
        guard let context else { return }
        closeSent = true
        send(
            WebSocketFrame(
                fin: true, opcode: .connectionClose, data: Self.closeData(code: code, reason: reason, context.channel)),
            flush: false)
        if closeReceived {
            context.flush()
            return drop()
        }
        scheduleCloseTimeout()
    }

    /// Drops the connection after `closeTimeout` whatever became of the close frame: a client that stops
    /// reading never lets its write complete, and would hold the connection forever.
    private func scheduleCloseTimeout() {
        guard let context, closeTimer == nil else { return }
        let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
        closeTimer = context.eventLoop.scheduleTask(in: limits.closeTimeout) {
            let player = bound.value
            player.closeTimer = nil
            player.drop()
        }
    }

    /// A close frame's body: the code (none when nil or one that may not be sent) and the reason, cut to
    /// the 123 bytes a control frame leaves for it.
    static func closeData(code: Int?, reason: String, _ channel: any Channel) -> ByteBuffer {
        var data = channel.allocator.buffer(capacity: 2)
        guard let code, WebSocketClose.isSendable(code) else { return data }
        data.write(webSocketErrorCode: WebSocketErrorCode(codeNumber: code))
        data.writeString(WebSocketClose.cut(reason))
        return data
    }

    /// Fails the connection (RFC 6455 7.1.7): a close frame with `code`, then the end, without waiting.
    private func fail(_ code: WebSocketErrorCode, _ why: String) {
        guard !failed, let context else { return }
        failed = true
        pending.removeAll()
        partial = nil
        let channel = context.channel
        guard !closeSent else { return drop() }
        closeSent = true
        var data = channel.allocator.buffer(capacity: 2 + why.utf8.count)
        data.write(webSocketErrorCode: code)
        data.writeString(WebSocketClose.cut(why))
        context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .connectionClose, data: data)))
            .whenComplete { _ in channel.close(promise: nil) }
        scheduleCloseTimeout()
    }

    private func drop() {
        failed = true
        stopTimers()
        context?.close(promise: nil)
    }

    private func stopTimers() {
        timer?.cancel()
        timer = nil
        timerDeadline = nil
        idleTimer?.cancel()
        idleTimer = nil
        closeTimer?.cancel()
        closeTimer = nil
    }

    // MARK: Idle

    private func scheduleIdleCheck() {
        guard let context, let idleTimeout = limits.idleTimeout, context.channel.isActive else { return }
        let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
        idleTimer = context.eventLoop.scheduleTask(deadline: lastActivity + idleTimeout) {
            bound.value.checkIdle()
        }
    }

    private func checkIdle() {
        idleTimer = nil
        guard context != nil, !failed, let idleTimeout = limits.idleTimeout else { return }
        guard NIODeadline.now() >= lastActivity + idleTimeout else { return scheduleIdleCheck() }
        // Going away, as a server that shuts an idle connection says (1001).
        fail(.goingAway, "idle for \(idleTimeout.nanoseconds / 1_000_000_000) s")
    }

    /// The longest wait played, in seconds: the cassette's bound on an offset (a week), as
    /// `WebSocketConversationSide` caps it.
    static let longestWaitSeconds: Int64 = 7 * 86_400

    /// `duration` as a NIO time amount: at least zero, at most `longestWaitSeconds` (a hostile or broken
    /// schedule cannot overflow the deadline arithmetic).
    static func timeAmount(_ duration: Duration) -> TimeAmount {
        let (seconds, attoseconds) = duration.components
        guard seconds >= 0 else { return .zero }
        guard seconds < longestWaitSeconds else { return .seconds(longestWaitSeconds) }
        return .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }
}
