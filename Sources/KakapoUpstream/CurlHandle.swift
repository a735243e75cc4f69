import CCurl
import KakapoHTTP

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One libcurl easy handle and the transfer it carries, driven by a `CurlMultiLoop` (only ever touched on
/// that loop's thread). `start` sets a request up; the loop runs it; `finish` turns libcurl's result
/// into the response. The handle is reused for later transfers.
final class CurlHandle {
    let handle: UnsafeMutableRawPointer
    let errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
    private var headerList: UnsafeMutablePointer<curl_slist>?
    private var sinkPointer: Unmanaged<ResponseSink>?
    private var uploadPointer: Unmanaged<UploadSource>?
    /// Where the transfer in progress goes.
    private(set) var url = ""
    /// The upstream proxy the transfer in progress goes through; nil: direct.
    private(set) var proxy: UpstreamProxy?
    /// The transfer in progress goes through `proxy` in a `CONNECT` tunnel (an `https://` or `h2c://`
    /// upstream), so failures before the tunnel stands are the proxy's.
    private(set) var tunnelled = false
    /// The transfer in progress: its response so far.
    private(set) var sink: ResponseSink?
    /// Which transfer the handle carries (a loop numbers them).
    var serial = 0
    /// Told the result when the transfer ends.
    var completion: (@Sendable (Result<HTTP.Response, UpstreamError>) -> Void)?

    init?() {
        CurlHandle.globalInit
        guard let handle = curl_easy_init() else { return nil }
        self.handle = handle
    }

    deinit {
        release()
        curl_easy_cleanup(handle)
        errorBuffer.deallocate()
    }

    static let globalInit: Void = { _ = kakapo_curl_global_init() }()

    /// libcurl's receive buffer: larger than its 16 KiB default, for fewer callbacks and hops to the
    /// event loop per megabyte of a large body, but under 64 KiB. libcurl allocates this buffer for every
    /// transfer and frees it at its end, and glibc answers a free of 64 KiB or more by consolidating its
    /// free lists (and a 128 KiB one with fresh pages, zeroed by the kernel): at 128 KiB that cost more
    /// per small answer than the rest of the transfer's setup.
    static let bufferSize = 48 << 10

    /// `seconds` in whole milliseconds, up to about 24 days (libcurl's longest timeout): a larger value,
    /// or one that is not a number, takes that bound instead of trapping; a negative one is 0.
    static func milliseconds(_ seconds: Double) -> Int {
        let limit = Double(Int32.max)
        let value = (seconds * 1000).rounded()
        guard !value.isNaN else { return Int(limit) }
        return Int(min(max(value, 0), limit))
    }

    /// Sets up `request` (already prepared for the upstream) to `url`; `caBundle` replaces the trusted CA
    /// certificates when given (PEM). With `http2PriorKnowledge` the request goes as cleartext HTTP/2 from
    /// the first byte (an `h2c://` upstream); an `https://` one gets HTTP/2 when its TLS handshake offers
    /// it (ALPN), HTTP/1.1 otherwise. `onStream` hears about answers that stream (see
    /// `UpstreamStreamEvent`); their bodies are kept for the completion only with `keepsStreamedBody`.
    /// `resumer` continues the transfer after a listener paused it.
    func start(
        _ request: HTTP.Request, url: String, proxy: UpstreamProxy?, http2PriorKnowledge: Bool = false,
        configuration: UpstreamConfiguration, caBundle: [UInt8]?,
        keepsStreamedBody: Bool, onStream: (@Sendable (UpstreamStreamEvent) -> StreamDisposition)?,
        bodyStream: RequestBodyStream? = nil, resumer: TransferResumer
    ) {
        curl_easy_reset(handle)
        errorBuffer[0] = 0
        self.url = url
        self.proxy = proxy
        let secure = url.utf8.count >= 6 && url.prefix(6).lowercased() == "https:"
        // libcurl speaks HTTP/1.1 to an HTTP proxy that forwards: cleartext HTTP/2 goes through a tunnel.
        tunnelled = proxy != nil && (secure || http2PriorKnowledge)
        let sink = ResponseSink(
            configuration: configuration, bodyExpected: request.method.rawValue != "HEAD",
            keepsStreamedBody: keepsStreamedBody, resumer: resumer)
        sink.onStream = onStream
        sink.proxied = proxy != nil
        sink.awaitingTunnel = tunnelled
        self.sink = sink
        let sinkPointer = Unmanaged.passRetained(sink)
        self.sinkPointer = sinkPointer

        for line in CurlHandle.headerLines(for: request) {
            headerList = curl_slist_append(headerList, line)
        }
        if let bodyStream, bodyStream.length == nil {
            headerList = curl_slist_append(headerList, "Transfer-Encoding: chunked")
        }

        _ = kakapo_curl_setopt_string(handle, CURLOPT_URL, url)
        _ = kakapo_curl_setopt_pointer(handle, CURLOPT_ERRORBUFFER, errorBuffer)
        _ = kakapo_curl_setopt_long(handle, CURLOPT_NOSIGNAL, 1)
        _ = kakapo_curl_setopt_long(
            handle, CURLOPT_CONNECTTIMEOUT_MS, CurlHandle.milliseconds(configuration.connectTimeout))
        // No total timeout: the progress callback applies `configuration.timeout` to the whole exchange,
        // or, once an answer streams, to the gaps between its pieces.
        _ = kakapo_curl_setopt_progress(handle, curlProgressCallback, sinkPointer.toOpaque())
        _ = kakapo_curl_setopt_long(handle, CURLOPT_FOLLOWLOCATION, 0)
        _ = kakapo_curl_setopt_long(handle, CURLOPT_HTTP_CONTENT_DECODING, 0)
        _ = kakapo_curl_setopt_long(handle, CURLOPT_TCP_NODELAY, 1)
        _ = kakapo_curl_setopt_long(handle, CURLOPT_BUFFERSIZE, CurlHandle.bufferSize)
        setHTTPVersion(secure: secure, http2PriorKnowledge: http2PriorKnowledge)
        if tunnelled && !secure { _ = kakapo_curl_setopt_long(handle, CURLOPT_HTTPPROXYTUNNEL, 1) }
        _ = kakapo_curl_setopt_long(handle, CURLOPT_SSL_VERIFYPEER, configuration.insecure ? 0 : 1)
        _ = kakapo_curl_setopt_long(handle, CURLOPT_SSL_VERIFYHOST, configuration.insecure ? 0 : 2)
        setProxy(proxy, configuration: configuration, caBundle: caBundle)
        if let caBundle {
            _ = caBundle.withUnsafeBytes { bytes in
                kakapo_curl_setopt_blob(
                    handle, CURLOPT_CAINFO_BLOB, UnsafeMutableRawPointer(mutating: bytes.baseAddress), bytes.count)
            }
        }
        _ = kakapo_curl_setopt_slist(handle, CURLOPT_HTTPHEADER, headerList)
        _ = kakapo_curl_setopt_callback(handle, CURLOPT_HEADERFUNCTION, curlHeaderCallback)
        _ = kakapo_curl_setopt_pointer(handle, CURLOPT_HEADERDATA, sinkPointer.toOpaque())
        _ = kakapo_curl_setopt_callback(handle, CURLOPT_WRITEFUNCTION, curlWriteCallback)
        _ = kakapo_curl_setopt_pointer(handle, CURLOPT_WRITEDATA, sinkPointer.toOpaque())

        let method = request.method.rawValue
        if let bodyStream {
            // The body is read as it arrives from the client (see `RequestBodyStream`).
            sink.uploading = true
            let upload = Unmanaged.passRetained(UploadSource(stream: bodyStream, sink: sink))
            uploadPointer = upload
            _ = kakapo_curl_setopt_long(handle, CURLOPT_POST, 1)
            _ = kakapo_curl_setopt_offset(handle, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(bodyStream.length ?? -1))
            _ = kakapo_curl_setopt_callback(handle, CURLOPT_READFUNCTION, curlReadCallback)
            _ = kakapo_curl_setopt_pointer(handle, CURLOPT_READDATA, upload.toOpaque())
            _ = kakapo_curl_setopt_string(handle, CURLOPT_CUSTOMREQUEST, method)
        } else if method == "HEAD" {
            _ = kakapo_curl_setopt_long(handle, CURLOPT_NOBODY, 1)
        } else if method == "GET" && request.body.isEmpty {
            _ = kakapo_curl_setopt_long(handle, CURLOPT_HTTPGET, 1)
        } else {
            if !request.body.isEmpty || method == "POST" || method == "PUT" || method == "PATCH" {
                // libcurl copies the body (the size first: bodies may hold NUL bytes).
                _ = kakapo_curl_setopt_offset(handle, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(request.body.count))
                request.body.withUnsafeBufferPointer { body in
                    if let base = body.baseAddress, !body.isEmpty {
                        _ = kakapo_curl_setopt_pointer(
                            handle, CURLOPT_COPYPOSTFIELDS, UnsafeMutableRawPointer(mutating: base))
                    } else {
                        _ = kakapo_curl_setopt_string(handle, CURLOPT_COPYPOSTFIELDS, "")
                    }
                }
            }
            _ = kakapo_curl_setopt_string(handle, CURLOPT_CUSTOMREQUEST, method)
        }
    }

    /// The transfer ended with `code`: its result. The handle is then free for the next transfer.
    func finish(_ code: CURLcode) -> Result<HTTP.Response, UpstreamError> {
        defer { release() }
        guard let sink else {
            return .failure(UpstreamError(code: .other, message: "no transfer was started"))
        }
        var status = 0
        _ = kakapo_curl_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &status)
        if let proxy, let refusal = proxyFailure(code, status: status, proxy: proxy, sink: sink) {
            return .failure(refusal)
        }
        guard code == CURLE_OK else {
            return .failure(error(for: code, sink: sink, url: url))
        }
        return .success(
            HTTP.Response(
                status: status, headers: sink.responseHeaders(), body: sink.body, trailers: sink.responseTrailers(),
                version: answeredVersion))
    }

    /// Drops the transfer without a result (the loop is shutting down).
    func abandon() { release() }

    private func release() {
        curl_slist_free_all(headerList)
        headerList = nil
        sinkPointer?.release()
        sinkPointer = nil
        uploadPointer?.release()
        uploadPointer = nil
        sink = nil
    }

    /// The header lines to send: every end-to-end header of the prepared request, plus empty headers that
    /// stop libcurl from adding its own (`Accept`, `Expect`, a form `Content-Type`).
    static func headerLines(for request: HTTP.Request) -> [String] {
        var lines: [String] = []
        for field in request.headers where !field.name.caseInsensitiveEquals("Content-Length") {
            // "Name;" is libcurl's way to send a header with an empty value.
            lines.append(field.value.isEmpty ? field.name + ";" : field.name + ": " + field.value)
        }
        if !request.headers.contains("Accept") { lines.append("Accept:") }
        if !request.headers.contains("Expect") { lines.append("Expect:") }
        if !request.headers.contains("Content-Type") { lines.append("Content-Type:") }
        return lines
    }

    /// What libcurl said about a failed transfer: its error buffer, else the code's text.
    func reason(for code: CURLcode) -> String {
        let detail = String(cString: errorBuffer)
        return detail.isEmpty ? String(cString: curl_easy_strerror(code)) : detail
    }

    private func error(for code: CURLcode, sink: ResponseSink, url: String) -> UpstreamError {
        if let refusal = refusal(by: sink, url: url) ?? headerListOverflow(code, sink: sink, url: url) {
            return refusal
        }
        let reason = reason(for: code)
        switch code {
        case CURLE_ABORTED_BY_CALLBACK where sink.timedOut:
            let seconds = sink.seconds
            return UpstreamError(
                code: .timeout,
                message: sink.streaming
                    ? "the upstream's streamed answer from \(url) stalled: nothing for \(seconds) s"
                    : "the upstream did not answer in time: no complete answer from \(url) after \(seconds) s")
        case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY, CURLE_COULDNT_CONNECT:
            // Not the upstream's doing when the socket (or the resolver's) could not even be made.
            if let exhausted = Self.descriptorsExhausted() {
                return UpstreamError(
                    code: .outOfDescriptors,
                    message:
                        "Kakapo is out of file descriptors (\(exhausted)) and cannot open a connection to \(url): end the sessions and connections that hold them, or raise the limit (ulimit -n)"
                )
            }
            if code == CURLE_COULDNT_CONNECT {
                return UpstreamError(code: .connectionFailed, message: "cannot connect to the upstream: \(reason)")
            }
            return UpstreamError(code: .dnsFailure, message: "cannot resolve the upstream host: \(reason)")
        case CURLE_OPERATION_TIMEDOUT:
            return UpstreamError(code: .timeout, message: "the upstream did not answer in time: \(reason)")
        case CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CERTPROBLEM, CURLE_SSL_CIPHER,
            CURLE_SSL_CACERT_BADFILE, CURLE_SSL_ISSUER_ERROR, CURLE_SSL_PINNEDPUBKEYNOTMATCH:
            return UpstreamError(code: .tlsFailure, message: "TLS with the upstream failed: \(reason)")
        case CURLE_RECV_ERROR, CURLE_SEND_ERROR, CURLE_PARTIAL_FILE, CURLE_GOT_NOTHING:
            return UpstreamError(code: .connectionLost, message: "the upstream connection broke: \(reason)")
        case CURLE_URL_MALFORMAT, CURLE_UNSUPPORTED_PROTOCOL:
            return UpstreamError(code: .invalidURL, message: "invalid upstream URL \(url): \(reason)")
        case CURLE_WEIRD_SERVER_REPLY, CURLE_HTTP2, CURLE_HTTP2_STREAM:
            return UpstreamError(code: .protocolError, message: "the upstream sent an invalid response: \(reason)")
        default:
            return UpstreamError(code: .other, message: reason)
        }
    }

    /// "EMFILE" or "ENFILE" when this process cannot make a socket for want of descriptors, else nil. libcurl
    /// reports a socket it could not make as any failure to connect, without the reason (its
    /// `CURLINFO_OS_ERRNO` stays 0), so a connection that failed at once is checked with a socket of our own.
    static func descriptorsExhausted() -> String? {
        #if canImport(Glibc)
            let probe = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
            let probe = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        if probe >= 0 {
            close(probe)
            return nil
        }
        switch errno {
        case EMFILE: return "EMFILE"
        case ENFILE: return "ENFILE"
        default: return nil
        }
    }

    /// Why the sink ended the transfer, when it refused what came: whatever the code libcurl ends it with.
    /// Over HTTP/1.1 a refused header line or body piece is `CURLE_WRITE_ERROR`; over HTTP/2 libcurl 8 hands
    /// fields over from inside nghttp2's callbacks, and the same refusal ends the connection's input as
    /// `CURLE_HTTP2` or `CURLE_RECV_ERROR` ("nghttp2 recv error -902").
    private func refusal(by sink: ResponseSink, url: String) -> UpstreamError? {
        if sink.tooManyTrailers { return CurlHandle.trailersTooLarge(url) }
        if let invalid = sink.invalidField {
            return UpstreamError(
                code: .protocolError, message: "the upstream sent an invalid response from \(url): \(invalid)")
        }
        if sink.exceededLimit {
            return UpstreamError(
                code: .responseTooLarge, message: "the upstream response from \(url) is larger than \(sink.limit) bytes"
            )
        }
        if sink.stopped {
            return UpstreamError(code: .other, message: "the transfer from \(url) was abandoned: nobody reads it")
        }
        return nil
    }

    /// An HTTP/2 header list larger than libcurl takes. libcurl 7.88 keeps an HTTP/2 answer's header section
    /// and its trailers in buffers of its own (128 KiB each) and hands trailers over only once the stream
    /// ended: bigger ones fail nghttp2's header callback (NGHTTP2_ERR_CALLBACK_FAILURE, -902) before the sink
    /// sees one, and the transfer ends as `CURLE_RECV_ERROR`. After the final head nothing else from the wire
    /// fails that callback, so then it was the trailers; before it, the head may have been the one.
    private func headerListOverflow(_ code: CURLcode, sink: ResponseSink, url: String) -> UpstreamError? {
        guard code == CURLE_RECV_ERROR || code == CURLE_HTTP2, String(cString: errorBuffer).contains("-902")
        else { return nil }
        if sink.finalHeadEnded { return CurlHandle.trailersTooLarge(url) }
        return UpstreamError(
            code: .responseTooLarge,
            message:
                "the upstream's header section or trailers from \(url) are larger than libcurl takes over HTTP/2 (trailers: at most \(ResponseSink.maximumTrailerBytes) bytes or \(ResponseSink.maximumTrailerFields) fields)"
        )
    }

    /// The answer's trailers are past Kakapo's bound.
    private static func trailersTooLarge(_ url: String) -> UpstreamError {
        UpstreamError(
            code: .responseTooLarge,
            message:
                "the upstream's trailers from \(url) are larger than \(ResponseSink.maximumTrailerBytes) bytes or \(ResponseSink.maximumTrailerFields) fields"
        )
    }
}

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

private let curlHeaderCallback: kakapo_curl_data_callback = { data, size, count, userdata in
    let length = size * count
    guard let data, let userdata else { return 0 }
    let sink = Unmanaged<ResponseSink>.fromOpaque(userdata).takeUnretainedValue()
    var bytes = UnsafeRawBufferPointer(start: data, count: length)
    while let last = bytes.last, last == 0x0A || last == 0x0D {
        bytes = UnsafeRawBufferPointer(rebasing: bytes.dropLast())
    }
    if bytes.isEmpty {
        sink.headersEnded()
    } else if !sink.appendHeaderLine(bytes) {
        // Anything but `length` makes libcurl stop with CURLE_WRITE_ERROR.
        return 0
    }
    return length
}

private let curlWriteCallback: kakapo_curl_data_callback = { data, size, count, userdata in
    let length = size * count
    guard let data, let userdata else { return 0 }
    let sink = Unmanaged<ResponseSink>.fromOpaque(userdata).takeUnretainedValue()
    switch sink.appendBody(UnsafeRawBufferPointer(start: data, count: length)) {
    case .taken: return length
    // Less than `length` makes libcurl stop with CURLE_WRITE_ERROR.
    case .stop: return 0
    case .pause: return kakapo_curl_write_pause
    }
}

/// What the read callback needs: the body, and the transfer's sink (its resumer, its quiet-gap clock).
final class UploadSource {
    let stream: RequestBodyStream
    let sink: ResponseSink

    init(stream: RequestBodyStream, sink: ResponseSink) {
        self.stream = stream
        self.sink = sink
    }
}

private let curlReadCallback: kakapo_curl_data_callback = { buffer, size, count, userdata in
    guard let buffer, let userdata else { return kakapo_curl_read_abort }
    let upload = Unmanaged<UploadSource>.fromOpaque(userdata).takeUnretainedValue()
    switch upload.stream.read(
        into: UnsafeMutableRawBufferPointer(start: buffer, count: size * count), resumer: upload.sink.resumer)
    {
    case .bytes(let copied):
        upload.sink.noteActivity()
        return copied
    case .pause:
        upload.sink.hold()
        return kakapo_curl_read_pause
    case .end: return 0
    case .abort: return kakapo_curl_read_abort
    }
}

private let curlProgressCallback: kakapo_curl_progress_callback = { userdata, _, _, _, _ in
    guard let userdata else { return 0 }
    let sink = Unmanaged<ResponseSink>.fromOpaque(userdata).takeUnretainedValue()
    // Non-zero makes libcurl stop with CURLE_ABORTED_BY_CALLBACK.
    return sink.withinDeadline() ? 0 : 1
}
