import KakapoEngine
import KakapoHTTP
import KakapoStreams
import KakapoStubs
import NIOCore
import NIOHTTP1

#if canImport(Glibc)
    import Glibc
#else
    import Darwin
#endif

/// Writes the pipeline's `Answer`s on one connection: a whole body from a `PreparedResponse` (a recorded
/// answer's prepared once in `PreparedReplies` and shared by every replay), a recorded or live stream
/// piece by piece (`AnswerWriter+Streaming`), or a route's fault as a broken connection; then keeps the
/// connection or closes it. A plain type the connection's `HTTPServerHandler` calls on its event loop, so
/// an answer costs no extra hop through the channel pipeline.
final class AnswerWriter {
    let replies: PreparedReplies
    /// How recorded streams are paced (`--stream-timing`).
    let streamTiming: StreamTiming
    /// A streamed answer's head has gone out and its end has not: nothing else can be said until it has.
    var streaming = false
    /// Bytes of streamed answers handed to the connection so far (wrapping): `SlowRequestWatch` reads it as
    /// progress.
    var sentBytes = 0

    init(replies: PreparedReplies, streamTiming: StreamTiming) {
        self.replies = replies
        self.streamTiming = streamTiming
    }

    /// Writes `answer` to `request`, then closes the connection unless `keepAlive`; `done` runs on the
    /// event loop once the answer is out.
    func write(
        _ answer: Answer, for request: HTTPRequestHead, keepAlive: Bool, context: ChannelHandlerContext,
        done: @escaping @Sendable () -> Void
    ) {
        switch answer.outcome {
        case .response(let status, let headers, let body):
            let isHead = request.method == .HEAD
            switch body {
            case .bytes(let bytes):
                writeWhole(status, headers, bytes, answer: answer, for: request, keepAlive, context, done)
            case .live where !isHead, .recorded where !isHead:
                writeStream(status, headers, body, answer: answer, for: request, keepAlive, context, done)
            case .live(let live):
                // A HEAD gets the head only: the transfer behind it is not waited for.
                live.cancel()
                writeWhole(status, headers, [], answer: answer, for: request, keepAlive, context, done)
            case .recorded:
                writeWhole(status, headers, [], answer: answer, for: request, keepAlive, context, done)
            }
        case .fault(let kind):
            fail(kind, channel: context.channel, done: done)
        case .webSocket:
            // HTTPServerHandler hands WebSockets over before writing; nothing else may answer with one.
            let error = HTTP.Response.error("a WebSocket answer reached the HTTP writer", status: 500)
            writeWhole(
                error.status, error.headers, error.body, answer: Answer(response: error, source: .error), for: request,
                false, context, done)
        }
    }

    private func writeWhole(
        _ status: Int, _ fields: HTTP.Headers, _ bytes: [UInt8], answer: Answer, for request: HTTPRequestHead,
        _ keepAlive: Bool, _ context: ChannelHandlerContext, _ done: @escaping @Sendable () -> Void
    ) {
        let isHead = request.method == .HEAD
        // A recorded answer is prepared once for every method but HEAD; a HEAD request prepares its own.
        let prepared =
            isHead
            ? PreparedResponse(status: status, headers: fields, body: bytes, source: answer.source, for: .HEAD)
            : answer.replay.map { position in
                replies.value(position, second: answer.replaySecond) {
                    PreparedResponse(status: status, headers: fields, body: bytes, source: answer.source)
                }
            }
                ?? PreparedResponse(
                    status: status, headers: fields, body: bytes, source: answer.source, for: request.method)
        var headers = isHead ? prepared.headHeaders : prepared.headers
        if !keepAlive { headers.add(name: "Connection", value: "close") }
        let trailers = isHead ? nil : Self.trailers(answer.trailers, for: request)
        if trailers != nil && request.version.major < 2 {
            // HTTP/1.1 sends trailers after a chunked body only.
            headers.remove(name: "Content-Length")
            headers.add(name: "Transfer-Encoding", value: "chunked")
        }
        context.write(
            NIOAny(
                HTTPServerResponsePart.head(
                    HTTPResponseHead(version: request.version, status: prepared.status, headers: headers))),
            promise: nil)
        if !isHead && !prepared.bodyless && !bytes.isEmpty {
            context.write(NIOAny(HTTPServerResponsePart.body(.byteBuffer(prepared.body(bytes)))), promise: nil)
        }
        guard !keepAlive else {
            // Out as far as the socket takes it: nothing waits for the write to complete.
            context.writeAndFlush(NIOAny(HTTPServerResponsePart.end(trailers)), promise: nil)
            done()
            return
        }
        let channel = context.channel
        context.writeAndFlush(NIOAny(HTTPServerResponsePart.end(trailers))).whenComplete { _ in
            channel.close(promise: nil)
            done()
        }
    }

    /// The trailer fields to send after the body: all of them on HTTP/2, and on HTTP/1.1 only to a client
    /// that said it takes them (`TE: trailers`, as gRPC clients do); nil when none go out.
    static func trailers(_ fields: HTTP.Headers, for request: HTTPRequestHead) -> NIOHTTP1.HTTPHeaders? {
        guard !fields.isEmpty, request.version.major >= 2 || acceptsTrailers(request) else { return nil }
        var headers = NIOHTTP1.HTTPHeaders()
        for field in fields { headers.add(name: field.name, value: field.value) }
        return headers
    }

    /// Whether an HTTP/1.1 request said it takes trailers (`TE: trailers`).
    static func acceptsTrailers(_ request: HTTPRequestHead) -> Bool {
        request.headers[canonicalForm: "te"].contains { $0.lowercased() == "trailers" }
    }

    /// Breaks the connection the way a route's fault says.
    private func fail(_ fault: Fault.Kind, channel: any Channel, done: @escaping @Sendable () -> Void) {
        switch fault {
        case .connectionReset:
            // SO_LINGER with a zero timeout makes close() send RST instead of FIN.
            let lingering =
                (channel as? any SocketOptionProvider)?.setSoLinger(linger(l_onoff: 1, l_linger: 0))
                ?? channel.eventLoop.makeSucceededVoidFuture()
            lingering.whenComplete { _ in
                channel.close(promise: nil)
                done()
            }
        case .emptyResponse:
            channel.close().whenComplete { _ in done() }
        case .malformedResponse:
            channel.writeBelowHTTPEncoderAndClose(Self.garbage, done: done)
        }
    }

    /// What a malformed-response fault sends: no HTTP at all.
    private static let garbage = ByteBuffer(bytes: Array("\u{0}\u{7F}KAKAPO-MALFORMED \u{1}\u{2}\r\n\r\n".utf8))
}
