import KakapoEngine
import KakapoGRPC
import KakapoHTTP
import KakapoUpstream
import NIOCore
import NIOHTTP1

/// Turns the HTTP parts of one connection into whole requests, within the limits: the per-request body
/// limit (413), the body budget all connections share (503), one `Host` (400), the forward proxy's
/// credentials (407, `RequestAddressing.authorize`; a `CONNECT`'s are checked by the handler). Answers
/// `Expect: 100-continue`, and hands a large body that goes upstream as it arrives to a
/// `RequestBodyStream` instead of buffering it. Such a body is read here until it ends or passes
/// `streamingStart` before anything goes upstream, so a client that sends a little and then nothing costs
/// a socket and those bytes, never an upstream connection or a transfer's place. A plain type the connection's `HTTPServerHandler` calls, so reading a
/// request costs no extra hop through the channel pipeline.
struct RequestReader {
    /// What a part read completes.
    enum Event {
        /// A request to answer: its body whole, or (`stream` set) arriving through `stream` from now on.
        case request(HTTPRequestHead, body: [UInt8], reservation: BodyReservation, stream: RequestBodyStream?)
        /// A `CONNECT` has been read whole (any body it had is ignored).
        case connect(HTTPRequestHead)
        /// The request being read is refused; the rest of its body is read and dropped.
        case refused(HTTPRequestHead, message: String, status: HTTPResponseStatus, headers: [(String, String)])
    }

    private let settings: HTTPConnectionSettings
    private let timeouts: ConnectionTimeoutHandler?
    /// The origin every request on this connection is addressed to (inside a decrypted tunnel).
    private let origin: String?
    private var head: HTTPRequestHead?
    private var body: ByteBuffer?
    private var rejected = false
    /// A `CONNECT` head has been read; its end opens the tunnel.
    private var connecting = false
    /// The body of the request being read, when it goes upstream as it arrives.
    private(set) var bodyStream: RequestBodyStream?
    /// The body of the request being read may go upstream as it arrives (`streams(_:length:)`), once
    /// more than `streamingStart` bytes of it have come; until then it is read like any other.
    private var mayStream = false
    /// The announced length of a body that may stream; nil for a chunked one, whose end comes in-band.
    private var streamLength: Int?
    /// How much of a body that may stream is read before it goes upstream: one that ends sooner is
    /// forwarded whole (as nginx's request buffering does).
    static let streamingStart = 1 << 20
    /// Bytes of the shared body budget the request being read holds (what has arrived of its body);
    /// handed to the request's `BodyReservation` when it is complete.
    private var heldBodyBytes = 0

    init(settings: HTTPConnectionSettings, timeouts: ConnectionTimeoutHandler?, origin: String?) {
        self.settings = settings
        self.timeouts = timeouts
        self.origin = origin
    }

    /// Reads one part; returns what it completes, if anything.
    mutating func read(_ part: HTTPServerRequestPart, context: ChannelHandlerContext) -> Event? {
        if connecting {
            guard case .end = part, let head else { return nil }
            connecting = false
            self.head = nil
            timeouts?.requestReceived()
            return .connect(head)
        }
        switch part {
        case .head(let head) where head.method == .CONNECT:
            self.head = head
            connecting = true
            return nil
        case .head(let head):
            return read(head, context: context)
        case .body(let part):
            return read(part, context: context)
        case .end:
            timeouts?.requestReceived()
            if let bodyStream {
                bodyStream.finish()
                self.bodyStream = nil
                self.head = nil
                return nil
            }
            mayStream = false
            guard !rejected, let head else { return nil }
            self.head = nil
            let bytes = body.map { Array($0.readableBytesView) } ?? []
            body = nil
            return .request(head, body: bytes, reservation: takeReservation(), stream: nil)
        }
    }

    private mutating func read(_ head: HTTPRequestHead, context: ChannelHandlerContext) -> Event? {
        var head = head
        // Before anything else, so a client without the proxy's credentials gets no 100-continue and no
        // body of it is buffered or streamed.
        let unauthorised = RequestAddressing.authorize(&head, origin: origin, settings: settings)
        self.head = head
        self.body = nil
        self.rejected = false
        releaseHeldBody()
        if let unauthorised {
            return refuse(head, unauthorised, status: .proxyAuthenticationRequired, headers: ErrorWriter.proxyChallenge)
        }
        if let problem = Self.hostProblem(head) {
            return refuse(head, problem, status: .badRequest)
        }
        let length = head.headers.first(name: "content-length").flatMap(Int.init)
        // Sent upstream as it arrives (no size limit, its start read here), or read whole within the limit.
        let plan = streams(head, length: length)
        mayStream = plan.streams
        streamLength = plan.chunked ? nil : length
        if mayStream && Self.isCallStream(contentType: head.headers.first(name: "content-type")) {
            // A call's messages go at once: its server may answer each before the next is sent.
            mayStream = false
            bodyStream = startStream(length: streamLength, context: context)
        }
        if !mayStream && bodyStream == nil, let length, length > settings.maximumBodyBytes {
            return refuseTooLarge(head)
        }
        if !mayStream && bodyStream == nil, let length, length > settings.bodyBudget.available {
            // Refused before the client sends it. The budget is taken as bytes arrive, so a client
            // that announces a large body and sends nothing holds none of it.
            return refuseForBudget(head)
        }
        if head.headers.first(name: "expect")?.lowercased() == "100-continue" {
            // The client waits for permission before sending its body.
            let interim = HTTPResponseHead(version: head.version, status: .continue)
            context.writeAndFlush(NIOAny(HTTPServerResponsePart.head(interim)), promise: nil)
        }
        guard let bodyStream else { return nil }
        return .request(head, body: [], reservation: takeReservation(), stream: bodyStream)
    }

    private mutating func read(_ part: ByteBuffer, context: ChannelHandlerContext) -> Event? {
        var part = part
        if let bodyStream {
            if !bodyStream.append(Array(part.readableBytesView)) {
                // The upstream is behind: read no more from the client until it catches up.
                context.channel.setOption(ChannelOptions.autoRead, value: false).whenFailure { _ in }
            }
            return nil
        }
        guard !rejected, let head else { return nil }
        let total = (body?.readableBytes ?? 0) + part.readableBytes
        if mayStream
            && (total > min(Self.streamingStart, settings.maximumBodyBytes)
                || !settings.bodyBudget.reserve(part.readableBytes))
        {
            // Large enough (or the shared budget is short): it goes upstream as it arrives from now on.
            return streamFromHere(head, part, context: context)
        }
        if !mayStream && total > settings.maximumBodyBytes {
            return refuseTooLarge(head)
        }
        guard mayStream || settings.bodyBudget.reserve(part.readableBytes) else { return refuseForBudget(head) }
        heldBodyBytes += part.readableBytes
        if body == nil {
            body = part
        } else {
            body!.writeBuffer(&part)
        }
        return nil
    }

    /// Whether the body of `head` may go upstream as it arrives: a body of unknown or large size (over
    /// `streamingStart`) that only the upstream will see (`RequestPipeline.streamsBody(of:)`); and whether
    /// it is chunked (worked out only when it may stream).
    private func streams(_ head: HTTPRequestHead, length: Int?) -> (streams: Bool, chunked: Bool) {
        // Only passthrough streams bodies; the header checks below cost more than this one.
        guard settings.pipeline.configuration.mode == .passthrough else { return (false, false) }
        let chunked = head.headers[canonicalForm: "transfer-encoding"].contains { $0.lowercased() == "chunked" }
        guard chunked || (length ?? 0) > Self.streamingStart else { return (false, chunked) }
        let probe = HTTP.Request(method: HTTP.Method(head.method.rawValue), target: head.uri, origin: origin)
        return (settings.pipeline.streamsBody(of: probe), chunked)
    }

    /// Whether a body of `contentType` is a stream of call messages whose server may answer each before the
    /// next comes (gRPC, and Connect's streaming calls, `application/connect+proto` or `+json`): held here
    /// until its first MiB, a bidirectional call would wait for an answer that cannot come.
    static func isCallStream(contentType: String?) -> Bool {
        guard let contentType else { return false }
        if GRPC.isGRPC(contentType: contentType) { return true }
        return contentType.lowercased().drop { $0 == " " || $0 == "\t" }.hasPrefix("application/connect+")
    }

    /// The body read so far, and `part`, go upstream as they arrive from now on: the request is handed on
    /// with a stream that starts with them, and the budget they held is given back (the stream's window
    /// bounds what waits from now on).
    private mutating func streamFromHere(_ head: HTTPRequestHead, _ part: ByteBuffer, context: ChannelHandlerContext)
        -> Event
    {
        mayStream = false
        let stream = startStream(length: streamLength, context: context)
        bodyStream = stream
        if let body, body.readableBytes > 0 { _ = stream.append(Array(body.readableBytesView)) }
        body = nil
        releaseHeldBody()
        if !stream.append(Array(part.readableBytesView)) {
            context.channel.setOption(ChannelOptions.autoRead, value: false).whenFailure { _ in }
        }
        return .request(head, body: [], reservation: takeReservation(), stream: stream)
    }

    /// A stream for the body being read, of announced `length` (nil: chunked), which goes upstream as it
    /// arrives from now on.
    private func startStream(length: Int?, context: ChannelHandlerContext) -> RequestBodyStream {
        let stream = RequestBodyStream(length: length)
        let channel = context.channel
        stream.onDrained {
            channel.eventLoop.execute {
                channel.setOption(ChannelOptions.autoRead, value: true).whenFailure { _ in }
            }
        }
        // A long upload is not a slow client: the request deadline does not apply to it.
        timeouts?.requestReceived()
        return stream
    }

    /// Whether a request's head has been read and its body is being read whole (not refused, not streamed
    /// upstream, not a `CONNECT`).
    var isReadingBody: Bool { head != nil && !rejected && !connecting && bodyStream == nil }

    /// Stops reading the request being read, to answer it before its body has ended: returns its head and
    /// its body so far, gives back the budget they held, and drops whatever more of it arrives.
    mutating func takeUnfinished() -> (head: HTTPRequestHead, body: [UInt8])? {
        guard isReadingBody, let head else { return nil }
        let bytes = body.map { Array($0.readableBytesView) } ?? []
        rejected = true
        self.head = nil
        abandon()
        return (head, bytes)
    }

    /// The connection is gone, or no longer reads HTTP: a half-read body gives its bytes back, and an
    /// upload on its way upstream is abandoned.
    mutating func abandon() {
        mayStream = false
        bodyStream?.fail()
        bodyStream = nil
        body = nil
        releaseHeldBody()
    }

    /// Why a request head's `Host` is not acceptable, or nil: HTTP/1.1 needs exactly one (RFC 9112 3.2),
    /// and no version may send two, which would let two readers see two hosts.
    static func hostProblem(_ head: HTTPRequestHead) -> String? {
        // Counted by name alone: `headers[canonicalForm:]` splits values and costs more on every request.
        var count = 0
        var invalid: String?
        for (name, value) in head.headers where name.utf8.count == 4 && name.lowercased() == "host" {
            count += 1
            if invalid == nil && !isAuthority(value) { invalid = value }
        }
        if count > 1 { return "the request has \(count) Host headers; send exactly one" }
        if let invalid {
            return "the Host header \"\(invalid.prefix(64))\" is not one host[:port] (RFC 9112 3.2)"
        }
        if count == 0 && (head.version.major > 1 || head.version.minor >= 1) {
            return "an HTTP/1.1 request needs a Host header"
        }
        return nil
    }

    /// Whether `value` can be a `Host` field's value: empty, or one `host[:port]` (RFC 3986 authority
    /// without user info) spelled with letters, digits, `-._~`, `%` escapes, the sub-delimiters but `,` and
    /// `;`, and `[` `]` `:` for IP literals and the port. A list (`a.test, b.test`), blanks, a path or user
    /// info make it not one: two readers could see two hosts.
    static func isAuthority(_ value: String) -> Bool {
        // One pass over the bytes, allocating nothing: it runs on every request.
        let bytes = value.utf8
        guard let first = bytes.first else { return true }
        var index = bytes.startIndex
        if first == UInt8(ascii: "[") {
            // An IP literal: hex digits, `:`, `.`, and a `%` zone id, then `]`.
            index = bytes.index(after: index)
            let start = index
            while index < bytes.endIndex, bytes[index] != UInt8(ascii: "]") {
                guard isLiteralByte(bytes[index]) else { return false }
                index = bytes.index(after: index)
            }
            guard index < bytes.endIndex, index > start else { return false }
            index = bytes.index(after: index)
        } else {
            let start = index
            while index < bytes.endIndex, bytes[index] != UInt8(ascii: ":") {
                guard isRegNameByte(bytes[index]) else { return false }
                index = bytes.index(after: index)
            }
            guard index > start else { return false }
        }
        guard index < bytes.endIndex else { return true }
        // `:` and a port of 1 to 5 digits.
        guard bytes[index] == UInt8(ascii: ":") else { return false }
        index = bytes.index(after: index)
        var digits = 0
        while index < bytes.endIndex {
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) else { return false }
            digits += 1
            index = bytes.index(after: index)
        }
        return (1...5).contains(digits)
    }

    /// A letter, digit, `-._~`, `%` or a sub-delimiter but `,` and `;`: what a host name may hold here.
    private static func isRegNameByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
            UInt8(ascii: "~"), UInt8(ascii: "%"), UInt8(ascii: "!"), UInt8(ascii: "$"), UInt8(ascii: "&"),
            UInt8(ascii: "'"), UInt8(ascii: "("), UInt8(ascii: ")"), UInt8(ascii: "*"), UInt8(ascii: "+"),
            UInt8(ascii: "="):
            return true
        default:
            return false
        }
    }

    /// What an IP literal in brackets may hold: hex digits (and letters, for a zone id), `:`, `.`, `%`.
    private static func isLiteralByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: ":"), UInt8(ascii: "."), UInt8(ascii: "%"),
            UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "~"):
            return true
        default:
            return false
        }
    }

    /// The budget the request read so far holds, handed to the request: given back once it is answered.
    private mutating func takeReservation() -> BodyReservation {
        defer { heldBodyBytes = 0 }
        return BodyReservation(heldBodyBytes, of: settings.bodyBudget)
    }

    private mutating func refuseTooLarge(_ head: HTTPRequestHead) -> Event {
        refuse(
            head, "the request body is larger than the limit of \(settings.maximumBodyBytes) bytes",
            status: .payloadTooLarge)
    }

    /// 503 for a body that does not fit in what all connections may buffer together; the client may try
    /// again once others are answered.
    private mutating func refuseForBudget(_ head: HTTPRequestHead) -> Event {
        let limit = settings.bodyBudget.limit
        let pipeline = settings.pipeline
        pipeline.logger.warning(
            "refused \(head.method) \(pipeline.loggable(head.uri)): request bodies in memory would pass \(limit) bytes")
        return refuse(
            head, "the server holds as many request bodies as it may (\(limit) bytes); try again shortly",
            status: .serviceUnavailable, headers: [("Retry-After", "1")])
    }

    private mutating func refuse(
        _ head: HTTPRequestHead, _ message: String, status: HTTPResponseStatus, headers: [(String, String)] = []
    ) -> Event {
        rejected = true
        self.head = nil
        abandon()
        return .refused(head, message: message, status: status, headers: headers)
    }

    /// Gives back the budget held by the body being read (one that will not be answered).
    private mutating func releaseHeldBody() {
        settings.bodyBudget.release(heldBodyBytes)
        heldBodyBytes = 0
    }
}
