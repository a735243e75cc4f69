import KakapoHTTP

/// Collects one response: raw header lines in wire order and the body bytes, up to a limit. An answer
/// that streams (server-sent events, a body of unknown or large size) is also reported as it arrives,
/// when someone listens; its body is then kept only when asked.
final class ResponseSink {
    let limit: Int
    let timeout: Double
    /// The fields of the response being read, in wire order.
    private var fields = HTTP.Headers()
    /// The fields that came after the body (HTTP/2 trailers, a chunked body's), in wire order.
    private var trailers = HTTP.Headers()
    /// What `trailers` weighs, counted as HTTP/2 does (name, value and 32 bytes per field).
    private var trailerBytes = 0
    /// The final header section has ended: header lines from now on are trailers. libcurl hands them to
    /// the same callback, after the body, one line each.
    private var inTrailers = false
    /// The final answer's header section has ended (header lines from now on are trailers).
    var finalHeadEnded: Bool { inTrailers }
    var body: [UInt8] = []
    var exceededLimit = false
    var onStream: (@Sendable (UpstreamStreamEvent) -> StreamDisposition)?
    /// Continues the transfer after a listener (or an upload waiting for its client) paused it.
    let resumer: TransferResumer
    /// The listener paused the transfer (its client is behind): quiet time does not count as a stall.
    var paused = false
    /// Since when the transfer waits for its client, to take the answer (a paused write) or to send more
    /// of its body (a paused read); nil while it moves. A held transfer does not count against the
    /// loop's limit of transfers at once, and one held longer than `timeout` is abandoned.
    private(set) var heldSince: ContinuousClock.Instant?
    /// The request body streams from the client: `timeout` applies to quiet gaps, as for a streamed answer.
    var uploading = false
    /// Set once the head of a streamed answer has been reported: body bytes are reported too.
    private(set) var streaming = false
    /// The listener wants no more: the transfer is abandoned.
    private(set) var stopped = false
    /// The exchange took longer than `timeout` (a stream: went quiet for that long).
    private(set) var timedOut = false
    private let threshold: Int
    private let bodyExpected: Bool
    private let keepsStreamedBody: Bool
    /// Whether body bytes are kept for the completion.
    private var keeping = true
    /// The status of the response being read, from its status line.
    private var status = 0
    /// The last status line read (`HTTP/1.1 407 Proxy Authentication Required`, a proxy's answer to
    /// `CONNECT` among them), up to 200 bytes.
    private(set) var statusLine = ""
    /// The transfer goes through an upstream proxy: a 407 is the proxy's refusal, never streamed.
    var proxied = false
    /// The transfer is tunnelled through an upstream proxy and the proxy has not yet answered its
    /// `CONNECT` with a 2xx: the header sections until then are the proxy's, never streamed.
    var awaitingTunnel = false
    private let started = ContinuousClock.now
    private var lastActivity = ContinuousClock.now
    private let allowed: Duration
    /// `responseHeaders()` as last worked out, until another header line arrives: the end of the header
    /// section and the end of the exchange both need it.
    private var parsedHeaders: HTTP.Headers?

    init(
        configuration: UpstreamConfiguration, bodyExpected: Bool, keepsStreamedBody: Bool, resumer: TransferResumer
    ) {
        self.resumer = resumer
        self.limit = configuration.maximumResponseBytes
        self.threshold = configuration.streamingThreshold
        self.timeout = configuration.timeout
        self.allowed = .milliseconds(CurlHandle.milliseconds(configuration.timeout))
        self.bodyExpected = bodyExpected
        self.keepsStreamedBody = keepsStreamedBody
    }

    /// One header line without its line end, as libcurl hands it over (a trailer once the header section
    /// has ended); false (and `invalidField` says why) for a field no HTTP reader accepts: a name that is
    /// not a token, or a value with a bare CR, a line feed or a NUL byte. Such an answer is refused whole:
    /// forwarded, it would break the client's connection; recorded, a cassette that no longer loads. So is
    /// one whose trailers outgrow `maximumTrailerBytes` or `maximumTrailerFields` (`tooManyTrailers`).
    func appendHeaderLine(_ line: UnsafeRawBufferPointer) -> Bool {
        // A new status line starts a new response (after `100 Continue`, or a proxy's `200 Connection
        // established`): keep only the last response's fields.
        parsedHeaders = nil
        if line.starts(with: "HTTP/".utf8) {
            fields = HTTP.Headers()
            trailers = HTTP.Headers()
            trailerBytes = 0
            inTrailers = false
            // "HTTP/1.1 200 OK": the (three) digits after the first space.
            var code = 0
            if let space = line.firstIndex(of: 0x20) {
                for byte in line[(space + 1)...].prefix(3) {
                    guard byte >= 0x30 && byte <= 0x39 else { break }
                    code = code * 10 + Int(byte - 0x30)
                }
            }
            status = code
            statusLine = String(decoding: line.prefix(200), as: UTF8.self)
            return true
        }
        guard let colon = line.firstIndex(of: 0x3A) else { return true }
        var start = colon + 1
        var end = line.count
        while start < end && (line[start] == 0x20 || line[start] == 0x09) { start += 1 }
        while end > start && (line[end - 1] == 0x20 || line[end - 1] == 0x09) { end -= 1 }
        let nameBytes = UnsafeRawBufferPointer(rebasing: line[..<colon])
        let valueBytes = UnsafeRawBufferPointer(rebasing: line[start..<end])
        let kind = inTrailers ? "trailer" : "header"
        guard !nameBytes.isEmpty, nameBytes.allSatisfy(ResponseSink.isTokenByte) else {
            invalidField = "the \(kind) name \(ResponseSink.quoted(nameBytes)) is not a token"
            return false
        }
        if inTrailers {
            // Checked before anything is kept: a flood of trailers costs no more than the bound.
            trailerBytes += nameBytes.count + valueBytes.count + 32
            guard trailerBytes <= ResponseSink.maximumTrailerBytes, trailers.count < ResponseSink.maximumTrailerFields
            else {
                tooManyTrailers = true
                return false
            }
        }
        let name = String(decoding: nameBytes, as: UTF8.self)
        if let bad = valueBytes.first(where: { $0 == 0x0D || $0 == 0x0A || $0 == 0 }) {
            let what =
                bad == 0x0D ? "a bare carriage return (CR)" : bad == 0x0A ? "a bare line feed (LF)" : "a NUL byte"
            invalidField = "the \(kind) \(name) has \(what) in its value"
            return false
        }
        let value = String(decoding: valueBytes, as: UTF8.self)
        if inTrailers { trailers.add(name: name, value: value) } else { fields.add(name: name, value: value) }
        return true
    }

    /// The most trailer bytes an answer may have, counted as HTTP/2 counts a header list (name, value and
    /// 32 bytes per field): 64 KiB, half of what libcurl itself takes over HTTP/2. gRPC sends a few short
    /// ones (`grpc-status`, `grpc-message`, perhaps a few KiB of `grpc-status-details-bin`).
    static let maximumTrailerBytes = 64 << 10
    /// The most trailer fields an answer may have.
    static let maximumTrailerFields = 128
    /// The answer's trailers outgrew `maximumTrailerBytes` or `maximumTrailerFields`.
    private(set) var tooManyTrailers = false

    /// Why the answer was refused, when a header field was invalid (see `appendHeaderLine`).
    private(set) var invalidField: String?

    /// RFC 9110 `tchar`: what a header name is made of.
    static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "A")...UInt8(ascii: "Z"):
            return true
        default:
            return "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }

    /// `bytes` in quotes, with control and non-ASCII bytes escaped (`\r`, `\x01`), for a message.
    static func quoted(_ bytes: UnsafeRawBufferPointer) -> String {
        var text = "\""
        for byte in bytes.prefix(200) {
            switch byte {
            case 0x0D: text += "\\r"
            case 0x0A: text += "\\n"
            case 0x22, 0x5C: text += "\\" + String(UnicodeScalar(byte))
            case 0x20..<0x7F: text += String(UnicodeScalar(byte))
            default: text += "\\x" + (byte < 16 ? "0" : "") + String(byte, radix: 16)
            }
        }
        return text + "\""
    }

    /// The blank line after a header section: a final answer that streams is reported now. Event streams
    /// always stream; other bodies when their length is unknown or above the threshold.
    func headersEnded() {
        // A blank line after trailers (a chunked body's end) ends nothing more.
        if inTrailers { return }
        if awaitingTunnel {
            if (200..<300).contains(status) { awaitingTunnel = false }
            return
        }
        // A final answer's header section: what follows the body is trailers. (A 1xx is followed by
        // another status line, which starts over.)
        if status >= 200 { inTrailers = true }
        guard let onStream, !streaming, status >= 200, !(proxied && status == 407) else { return }
        let headers = responseHeaders()
        if !headers.announcesEventStream {
            guard bodyExpected, status != 204, status != 304 else { return }
            if let length = headers["Content-Length"].flatMap(Int.init), length <= threshold { return }
        }
        streaming = true
        keeping = keepsStreamedBody
        lastActivity = .now
        if onStream(.head(HTTP.Response(status: status, headers: headers), resumer)) == .stop { stopped = true }
    }

    /// What became of body bytes libcurl delivered.
    enum Intake {
        case taken
        /// The transfer ends (too large to buffer, or nobody listens).
        case stop
        /// Not taken: the transfer waits until resumed, then libcurl delivers the same bytes again.
        case pause
    }

    /// Takes body bytes, or stops or pauses the transfer.
    func appendBody(_ bytes: UnsafeRawBufferPointer) -> Intake {
        if stopped { return .stop }
        if streaming, let onStream {
            switch onStream(.data(Array(bytes))) {
            case .stop:
                stopped = true
                return .stop
            case .pause:
                paused = true
                hold()
                return .pause
            case .proceed:
                lastActivity = .now
            }
        }
        if keeping && body.count + bytes.count > limit {
            guard streaming, let onStream else {
                exceededLimit = true
                return .stop
            }
            keeping = false
            body = []
            _ = onStream(.tooLargeToKeep)
        }
        if keeping { body.append(contentsOf: bytes) }
        return .taken
    }

    /// Bytes went up or came down: a quiet gap starts now.
    func noteActivity() { lastActivity = .now }

    /// The transfer waits for its client (see `heldSince`).
    func hold() {
        if heldSince == nil { heldSince = .now }
    }

    /// Whether the transfer has waited for its client longer than `timeout` at `now`.
    func heldTooLong(at now: ContinuousClock.Instant) -> Bool {
        guard let heldSince else { return false }
        return now - heldSince > allowed
    }

    /// Why a transfer its client holds is abandoned: it waited longer than `timeout` (`heldTooLong`), or,
    /// when `crowded`, longest while other clients' transfers needed its place.
    func heldError(url: String, crowded: Bool) -> UpstreamError {
        let how = crowded ? "while other requests waited for its place" : "for \(seconds) s"
        return UpstreamError(
            code: .timeout,
            message: paused
                ? "the client took nothing more of the answer from \(url) \(how): the transfer was abandoned"
                : "the client sent nothing more of its body \(how): the request to \(url) was abandoned")
    }

    /// `timeout` for messages: "60", "0.5".
    var seconds: String { timeout == timeout.rounded() && abs(timeout) < 1e15 ? String(Int(timeout)) : String(timeout) }

    /// The transfer goes on after a pause.
    func resumed() {
        paused = false
        heldSince = nil
        lastActivity = .now
    }

    /// Called by libcurl now and then during the transfer: false ends it as timed out. Time spent waiting
    /// for the client is the loop's to bound (`heldSince`), not the upstream's.
    func withinDeadline() -> Bool {
        if paused || heldSince != nil { return true }
        if ContinuousClock.now - (streaming || uploading ? lastActivity : started) <= allowed { return true }
        timedOut = true
        return false
    }

    /// The final response's fields without hop-by-hop ones; libcurl has already de-chunked the body.
    func responseHeaders() -> HTTP.Headers {
        if let parsedHeaders { return parsedHeaders }
        let final = HopByHopHeaders.removing(from: fields)
        parsedHeaders = final
        return final
    }

    /// The fields that followed the body, without hop-by-hop ones (which no HTTP/2 client takes); empty
    /// when none came.
    func responseTrailers() -> HTTP.Headers {
        trailers.isEmpty ? trailers : HopByHopHeaders.removing(from: trailers)
    }
}
