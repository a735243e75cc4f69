import KakapoEngine
import KakapoGRPC
import KakapoHTTP
import KakapoStreams
import NIOCore
import NIOHTTP1

extension AnswerWriter {
    /// Writes an answer piece by piece: a live one as the upstream delivers it (each piece acknowledged once
    /// the socket took it, which is the upstream's backpressure), a recorded stream with its recorded gaps
    /// scaled by `--stream-timing` (or back to back with `none`) through `RecordedStreamPlayer`. A stream
    /// that breaks off (the upstream's, or a recording of such a break) closes the connection once its last
    /// piece is out, without the final chunk, so the client can tell.
    func writeStream(
        _ status: Int, _ fields: HTTP.Headers, _ body: Answer.Body, answer: Answer,
        for request: HTTPRequestHead, _ keepAlive: Bool, _ context: ChannelHandlerContext,
        _ done: @escaping @Sendable () -> Void
    ) {
        var headers = PreparedResponse.streamingHeaders(fields, source: answer.source)
        if !keepAlive { headers.add(name: "Connection", value: "close") }
        // Trailers may follow (a recording's, or a live answer's, known only at its end): an HTTP/1.1 client
        // that takes them gets a chunked body, the only one trailers can follow.
        var live: LiveResponse?
        if case .live(let stream) = body { live = stream }
        let mayHaveTrailers = live != nil || !answer.trailers.isEmpty
        if mayHaveTrailers && request.version.major < 2 && Self.acceptsTrailers(request) {
            headers.remove(name: "Content-Length")
        }
        let head = HTTPResponseHead(
            version: request.version, status: HTTPResponseStatus(statusCode: status), headers: headers)
        context.writeAndFlush(NIOAny(HTTPServerResponsePart.head(head)), promise: nil)
        streaming = true
        let loop = context.eventLoop
        let bound = NIOLoopBound((self, context), eventLoop: loop)
        let channel = context.channel
        let recordedTrailers = answer.trailers
        // The last piece written: a break closes the connection after it, not over it.
        let lastWrite = NIOLoopBoundBox<EventLoopFuture<Void>?>(nil, eventLoop: loop)
        let send: @Sendable (LiveResponse.Event) -> Void = { [live] event in
            loop.execute {
                let (writer, context) = bound.value
                switch event {
                case .data(let bytes):
                    writer.sentBytes &+= bytes.count
                    let written = context.writeAndFlush(
                        NIOAny(HTTPServerResponsePart.body(.byteBuffer(ByteBuffer(bytes: bytes)))))
                    lastWrite.value = written
                    if let live {
                        // The socket took them (backpressure), or the client is gone.
                        written.whenComplete { result in
                            switch result {
                            case .success: live.delivered(bytes.count)
                            case .failure: live.cancel()
                            }
                        }
                    }
                case .end:
                    writer.streaming = false
                    let trailers = AnswerWriter.trailers(live?.trailers ?? recordedTrailers, for: request)
                    context.writeAndFlush(NIOAny(HTTPServerResponsePart.end(trailers))).whenComplete { _ in
                        if !keepAlive { channel.close(promise: nil) }
                        done()
                    }
                case .broken where live != nil && AnswerWriter.saysBreaksWithStatus(request):
                    // A gRPC client reads a reset as CANCELLED, as if it had cancelled the call itself: the
                    // upstream's break is said the gRPC way instead, as trailers (nothing is recorded of it).
                    writer.streaming = false
                    let status: HTTP.Headers = [
                        GRPC.statusField: String(GRPCStatus.unavailable.code),
                        GRPC.messageField: GRPC.percentEncoded("kakapo: the upstream broke the answer off"),
                    ]
                    let ending = AnswerWriter.trailers(status, for: request)
                    context.writeAndFlush(NIOAny(HTTPServerResponsePart.end(ending))).whenComplete { _ in
                        if !keepAlive { channel.close(promise: nil) }
                        done()
                    }
                case .broken:
                    writer.streaming = false
                    (lastWrite.value ?? loop.makeSucceededVoidFuture()).whenComplete { _ in
                        channel.close().whenComplete { _ in done() }
                    }
                }
            }
        }
        switch body {
        case .live(let live):
            // A client that leaves while the upstream is quiet is noticed too.
            channel.closeFuture.whenComplete { _ in live.cancel() }
            live.attach(send)
        case .recorded(let chunks):
            RecordedStreamPlayer(
                chunks: chunks, timing: streamTiming, breaksOff: answer.breaksOff, holdsOpen: answer.holdsOpen
            ).play(
                after: { nanoseconds, work in
                    if nanoseconds > 0 {
                        loop.scheduleTask(in: .nanoseconds(nanoseconds), work)
                    } else {
                        loop.execute(work)
                    }
                },
                isCancelled: { !channel.isActive },
                deliver: { event in
                    switch event {
                    case .data(let bytes): send(.data(bytes))
                    case .end: send(.end)
                    case .broken: send(.broken)
                    // The client left: the answer is over for it too.
                    case .cancelled: send(.broken)
                    // The recording's client left the stream here: nothing more comes and the stream is not
                    // ended (as for that client), but the answer is out. The connection stays open until the
                    // client leaves, or until the idle timeout closes it as it closes any quiet connection
                    // with no answer on its way; shutdown does not wait for it.
                    case .held: loop.execute { done() }
                    }
                })
        case .bytes(let bytes):
            // `write` sends whole bodies itself; one that came here would go out as one piece.
            send(.data(bytes))
            send(.end)
        }
    }

    /// Whether a streamed answer the upstream breaks off ends with a gRPC status instead of a broken
    /// connection: a gRPC call whose client takes trailers (all of them over HTTP/2).
    static func saysBreaksWithStatus(_ request: HTTPRequestHead) -> Bool {
        GRPC.isGRPC(contentType: request.headers.first(name: "content-type"))
            && (request.version.major >= 2 || acceptsTrailers(request))
    }
}
