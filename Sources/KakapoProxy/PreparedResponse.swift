import KakapoHTTP
import NIOCore
import NIOHTTP1

/// A response ready for the wire: NIO headers with correct framing and `X-Kakapo-Source`, and the body
/// in a `ByteBuffer`. Recorded answers are prepared once and shared by every replay, so a replay copies
/// no headers and no body.
struct PreparedResponse: Sendable {
    let status: HTTPResponseStatus
    /// Headers for every method but HEAD: hop-by-hop fields dropped, `Content-Length` stating the body.
    let headers: NIOHTTP1.HTTPHeaders
    /// Headers for HEAD: the recorded `Content-Length` (the size a GET would get) kept as it was.
    let headHeaders: NIOHTTP1.HTTPHeaders
    let body: ByteBuffer
    /// 1xx, 204 and 304 answers carry no body and no length.
    let bodyless: Bool

    init(_ response: HTTPResponse, source: ResponseSource) {
        status = HTTPResponseStatus(statusCode: response.status)
        bodyless = response.status < 200 || response.status == 204 || response.status == 304
        var headers = NIOHTTP1.HTTPHeaders()
        var headHeaders = NIOHTTP1.HTTPHeaders()
        headers.reserveCapacity(response.headers.count + 2)
        var hasLength = false
        let length = String(response.body.count)
        for field in HopByHopHeaders.removing(from: response.headers) {
            if field.name.caseInsensitiveEquals("content-length") {
                // Kept in its place; a replay states the length of the body actually sent.
                headHeaders.add(name: field.name, value: field.value)
                if !bodyless && !hasLength { headers.add(name: field.name, value: length) }
                hasLength = true
                continue
            }
            headers.add(name: field.name, value: field.value)
            headHeaders.add(name: field.name, value: field.value)
        }
        if !bodyless && !hasLength { headers.add(name: "Content-Length", value: length) }
        headers.add(name: "X-Kakapo-Source", value: source.rawValue)
        headHeaders.add(name: "X-Kakapo-Source", value: source.rawValue)
        self.headers = headers
        self.headHeaders = headHeaders
        body = ByteBuffer(bytes: response.body)
    }
}
