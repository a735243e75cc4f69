import KakapoEngine
import KakapoRouter
import NIOCore
import NIOHTTP1

/// Writes every error Kakapo itself answers on the wire (a refused request, a tunnel that cannot open,
/// input NIO's parser rejected) and then closes the connection: `{"error": message}` from
/// `ErrorBody.error`, with one header set (`Content-Type`, any extra fields, `Content-Length`,
/// `X-Kakapo-Source: error`, `Connection: close`). Answers the pipeline produces go through
/// `AnswerWriter` instead.
struct ErrorWriter {
    /// Counts each error as in flight until it is out, so shutdown waits for it.
    let tracker: InFlightTracker

    /// Writes the error through the HTTP encoder, answering a request of `version`; a HEAD request gets
    /// the head alone.
    func write(
        _ message: String, status: HTTPResponseStatus, headers extra: [(String, String)] = [],
        version: HTTPVersion = .http1_1, headOnly: Bool = false, context: ChannelHandlerContext
    ) {
        let body = ErrorBody.error(message)
        let head = HTTPResponseHead(
            version: version, status: status, headers: Self.headers(bodyBytes: body.count, extra: extra))
        tracker.begin()
        context.write(NIOAny(HTTPServerResponsePart.head(head)), promise: nil)
        if !headOnly {
            context.write(NIOAny(HTTPServerResponsePart.body(.byteBuffer(ByteBuffer(bytes: body)))), promise: nil)
        }
        let channel = context.channel
        context.writeAndFlush(NIOAny(HTTPServerResponsePart.end(nil))).whenComplete { [tracker] _ in
            channel.close(promise: nil)
            tracker.end()
        }
    }

    /// Writes the error as bytes below the HTTP encoder, which leaves out the body of any answer to a
    /// `CONNECT`.
    func writeBelowEncoder(
        _ message: String, status: HTTPResponseStatus, headers extra: [(String, String)] = [], channel: any Channel
    ) {
        let body = ErrorBody.error(message)
        var bytes = ByteBuffer(string: "HTTP/1.1 \(status.code) \(status.reasonPhrase)\r\n")
        for (name, value) in Self.headers(bodyBytes: body.count, extra: extra) {
            bytes.writeString("\(name): \(value)\r\n")
        }
        bytes.writeString("\r\n")
        bytes.writeBytes(body)
        tracker.begin()
        channel.writeBelowHTTPEncoderAndClose(bytes) { [tracker] in tracker.end() }
    }

    /// The extra field of a 407 (a request without the forward proxy's credentials).
    static let proxyChallenge = [("Proxy-Authenticate", ProxyCredentials.challenge)]

    /// The one header set of Kakapo's own errors.
    private static func headers(bodyBytes: Int, extra: [(String, String)]) -> HTTPHeaders {
        var headers = HTTPHeaders([("Content-Type", "application/json")])
        headers.add(contentsOf: extra)
        headers.add(name: "Content-Length", value: String(bodyBytes))
        headers.add(name: "X-Kakapo-Source", value: ResponseSource.error.rawValue)
        headers.add(name: "Connection", value: "close")
        return headers
    }
}
