import KakapoEngine
import KakapoHTTP
import NIOCore
import NIOHTTP1

/// A response's head ready for the wire: NIO headers with correct framing and `X-Kakapo-Source`.
/// Recorded answers are prepared once (for every method but HEAD, which prepares its own) and shared by
/// replays, so a replay builds no headers. A small body is not kept here: it is copied from the response
/// for each replay, so a cassette of many small answers holds each body once. A large one is kept in a
/// `ByteBuffer` shared by every replay, so concurrent downloads of it cost no copy each.
struct PreparedResponse: Sendable {
    let status: HTTPResponseStatus
    /// Headers for every method but HEAD: hop-by-hop fields dropped, `Content-Length` stating the body.
    let headers: NIOHTTP1.HTTPHeaders
    /// Headers for HEAD: the recorded `Content-Length` (the size a GET would get) kept as it was.
    let headHeaders: NIOHTTP1.HTTPHeaders
    /// 1xx, 204 and 304 answers carry no body and no length.
    let bodyless: Bool
    /// The body for the wire when it is at least `sharedBodyBytes` long; nil for a smaller one.
    let sharedBody: ByteBuffer?

    /// The size from which a body is kept ready for the wire (below it, copying it costs less than
    /// keeping a second copy of every body).
    static let sharedBodyBytes = 16 * 1024

    /// Prepares `response`. `method` says which request it answers when it is sent once (only those
    /// headers are built); nil prepares it for both HEAD and the rest (a recorded answer, sent many times).
    init(
        status: Int, headers fields: HTTP.Headers, body: [UInt8], source: ResponseSource,
        for method: NIOHTTP1.HTTPMethod? = nil
    ) {
        self.status = HTTPResponseStatus(statusCode: status)
        bodyless = status < 200 || status == 204 || status == 304
        let needsHead = method == nil || method == .HEAD
        let needsOthers = method != .HEAD
        var headers = NIOHTTP1.HTTPHeaders()
        var headHeaders = NIOHTTP1.HTTPHeaders()
        if needsOthers { headers.reserveCapacity(fields.count + 2) }
        if needsHead { headHeaders.reserveCapacity(fields.count + 1) }
        var hasLength = false
        let length = String(body.count)
        for field in HopByHopHeaders.removing(from: fields) {
            if field.name.caseInsensitiveEquals("content-length") {
                // Kept in its place; a replay states the length of the body actually sent.
                if needsHead { headHeaders.add(name: field.name, value: field.value) }
                if needsOthers && !bodyless && !hasLength { headers.add(name: field.name, value: length) }
                hasLength = true
                continue
            }
            if Self.isUpstreamSource(field.name) { continue }
            if needsOthers { headers.add(name: field.name, value: field.value) }
            if needsHead { headHeaders.add(name: field.name, value: field.value) }
        }
        if needsOthers && !bodyless && !hasLength { headers.add(name: "Content-Length", value: length) }
        if needsOthers { headers.add(name: "X-Kakapo-Source", value: source.rawValue) }
        if needsHead { headHeaders.add(name: "X-Kakapo-Source", value: source.rawValue) }
        self.headers = needsOthers ? headers : headHeaders
        self.headHeaders = needsHead ? headHeaders : headers
        sharedBody =
            needsOthers && !bodyless && body.count >= Self.sharedBodyBytes
            ? ByteBuffer(bytes: body) : nil
    }

    /// `body` (the one this was prepared with) for the wire.
    func body(_ body: [UInt8]) -> ByteBuffer { sharedBody ?? ByteBuffer(bytes: body) }

    /// Headers for an answer sent piece by piece: hop-by-hop fields dropped, `X-Kakapo-Source` added. An
    /// event stream goes out with chunked framing (its length dropped); another body keeps the length
    /// the upstream announced, if any, so a download shows its progress.
    static func streamingHeaders(_ fields: HTTP.Headers, source: ResponseSource) -> NIOHTTP1.HTTPHeaders {
        var headers = NIOHTTP1.HTTPHeaders()
        let keepsLength = !fields.announcesEventStream
        for field in HopByHopHeaders.removing(from: fields)
        where (keepsLength || !field.name.caseInsensitiveEquals("content-length")) && !isUpstreamSource(field.name) {
            headers.add(name: field.name, value: field.value)
        }
        headers.add(name: "X-Kakapo-Source", value: source.rawValue)
        return headers
    }

    /// An upstream that is itself a Kakapo names its own source; this one's replaces it.
    private static func isUpstreamSource(_ name: String) -> Bool { name.caseInsensitiveEquals("x-kakapo-source") }
}
