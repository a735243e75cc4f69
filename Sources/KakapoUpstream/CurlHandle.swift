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
