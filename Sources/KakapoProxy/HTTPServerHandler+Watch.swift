import KakapoEngine
import KakapoGRPC
import KakapoHTTP
import NIOCore
import NIOHTTP1

/// No silent hangs: what a connection's request in flight is doing, for `SlowRequestWatch` (`--slow-warning`),
/// and gRPC calls that keep their request open while they wait for answers, answered UNIMPLEMENTED
/// (`OpenGRPCCalls`).
extension HTTPServerHandler: SlowRequestWatch.Watched {
    /// Notes a part of a request as it is read: its head begins it, a piece of its body moves it on.
    func watch(_ part: HTTPServerRequestPart, context: ChannelHandlerContext) {
        switch part {
        case .head(let head):
            watched.begin(head)
            if watchedChannel == nil, let watch = settings.watch {
                watchedChannel = context.channel
                watch.add(self, on: context.eventLoop)
            }
        case .body(let bytes):
            watched.events &+= 1
            watched.bodyBytes &+= bytes.readableBytes
            if openCall != nil {
                openCall?.frames.read(bytes.readableBytesView)
                openCall?.lastRead = .now()
            }
        case .end:
            openCall = nil
        }
    }

    /// The connection is gone or handed over: no longer watched.
    func unwatch(context: ChannelHandlerContext) {
        watched.phase = .idle
        guard watchedChannel != nil else { return }
        watchedChannel = nil
        settings.watch?.remove(self, on: context.eventLoop)
    }

    func checkSlow(now: NIODeadline, limit: TimeAmount) {
        guard !tunnelling, let channel = watchedChannel else { return }
        if case .stream(live: false) = watched.phase, channel.isWritable {
            // A recording played with its own gaps: waiting is what it was asked to do.
            watched.seen = -1
            return
        }
        guard watched.isNewlySlow(progress: watched.events &+ writer.sentBytes, now: now, limit: limit) else {
            return
        }
        let seconds = max(1, (now - watched.quietSince).nanoseconds / 1_000_000_000)
        pipeline.logger.warning(
            "slow: \(watched.method.rawValue) \(pipeline.loggable(watched.target)) has waited \(seconds) s \(waitingFor(channel))"
        )
    }

    /// What a quiet request waits for, for the slow line.
    private func waitingFor(_ channel: any Channel) -> String {
        switch watched.phase {
        case .idle, .body:
            return "for the client's request body (\(watched.bodyBytes) bytes so far)"
        case .answer:
            let configuration = pipeline.configuration
            guard configuration.mode != .replay, configuration.upstream != nil || configuration.forwardProxy != nil
            else { return "for its answer" }
            if let upstream = origin ?? configuration.upstream?.baseURL, !watched.target.hasPrefix("http") {
                return "for the upstream's first byte (\(upstream))"
            }
            return "for the upstream's first byte"
        case .writing, .stream:
            guard channel.isWritable else {
                let unsent = (try? channel.syncOptions?.getOption(ChannelOptions.bufferedWritableBytes)) ?? nil
                return "for the client to read" + (unsent.map { " (\(Self.size($0)) unsent)" } ?? "")
            }
            return "for the upstream's next chunk"
        }
    }

    /// `256 KiB`, `3 MiB`, `512 bytes`.
    static func size(_ bytes: Int) -> String {
        if bytes >= 1 << 20 { return "\(bytes >> 20) MiB" }
        if bytes >= 1 << 10 { return "\(bytes >> 10) KiB" }
        return "\(bytes) bytes"
    }

    /// A request's head has been read and its body is on its way: a gRPC call that could keep its request
    /// open is refused now (the descriptor set says it is bidirectional) or watched until its body ends.
    func checkOpenCall(_ head: HTTPRequestHead, context: ChannelHandlerContext) {
        // HTTP/1.1 requests (gRPC needs HTTP/2) cost this one comparison.
        guard head.version.major >= 2, reader.isReadingBody else { return }
        switch settings.openCalls.verdict(for: head, pipeline: pipeline) {
        case .none:
            return
        case .refuse(let message):
            refuseOpenCall(message, context: context)
        case .watch:
            openCall = OpenGRPCCalls.Watch(head: head)
            scheduleOpenCallCheck(at: .now() + settings.openCalls.quietLimit, context: context)
        }
    }

    /// Looks again once the quiet limit has passed: a request still open, with nothing more since, where a
    /// message ends, is one that waits for answers.
    private func scheduleOpenCallCheck(at deadline: NIODeadline, context: ChannelHandlerContext) {
        let generation = watched.generation
        let events = watched.events
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        context.eventLoop.scheduleTask(deadline: deadline) {
            let (handler, context) = bound.value
            guard handler.watched.generation == generation, let call = handler.openCall, !handler.discarding,
                handler.reader.isReadingBody, context.channel.isActive
            else { return }
            if handler.watched.events == events && call.frames.atBoundary {
                let message = handler.settings.openCalls.quietMessage(
                    for: call.head, messages: call.frames.messages, pipeline: handler.pipeline)
                handler.refuseOpenCall(message, context: context)
            } else {
                // Something came since (or a message is cut short): a quiet limit from the last piece.
                let next = max(call.lastRead + handler.settings.openCalls.quietLimit, .now() + .milliseconds(100))
                handler.scheduleOpenCallCheck(at: next, context: context)
            }
        }
    }

    /// Answers the request being read UNIMPLEMENTED with `message` before its body has ended, journals it and
    /// logs it (once per method). The rest of the request is read and dropped: an HTTP/2 stream is reset
    /// after the answer with NO_ERROR, "stop sending" (`HTTP2StreamAbort`; a CANCEL there was sometimes read
    /// by grpcio before the status); an HTTP/1.1 connection closes after the answer.
    func refuseOpenCall(_ message: String, context: ChannelHandlerContext) {
        guard let (head, body) = reader.takeUnfinished() else { return }
        openCall = nil
        discarding = true
        settings.openCalls.log(message, for: head, pipeline: pipeline)
        let configuredHost = pipeline.configuration.host
        let listening = { ListeningAddress(configuredHost: configuredHost, local: context.channel.localAddress) }
        let request: HTTP.Request
        switch RequestAddressing.address(
            head, body: body, origin: origin, session: session, settings: settings, listening: listening)
        {
        case .request(let addressed):
            request = addressed
        case .refused(let reason, let status):
            watched.phase = .idle
            errors.write(reason, status: status, version: head.version, context: context)
            return
        }
        settings.tracker.begin()
        answering += 1
        let answer = Answer(response: GRPC.errorResponse(status: .unimplemented, message: message), source: .error)
        finish(answer, for: head, request: request, started: NIODeadline.now(), context: context)
    }
}

extension WatchedRequest {
    /// The phase an answer puts its request in while it is written.
    static func phase(of answer: Answer) -> Phase {
        switch answer.outcome {
        case .response(_, _, .live): .stream(live: true)
        case .response(_, _, .recorded): .stream(live: false)
        default: .writing
        }
    }
}
