import KakapoCassette
import KakapoHTTP

/// What the inspector holds of one journaled request: its event and, while the detail store has room, the
/// request and the answer as they were (references to their copy-on-write arrays, so keeping them costs
/// no copy on the request's path). Redaction, base64 and JSON happen only when the detail is asked for.
package struct InspectorRecord: Sendable {
    /// A body as kept: whole up to `bodyLimit` bytes, else its first `bodyLimit` bytes (or none, for JSON,
    /// whose secret-named fields could not be redacted from a cut document).
    package struct Body: Sendable {
        package let bytes: [UInt8]
        /// The body's size as it was.
        package let size: Int

        package var isWhole: Bool { bytes.count == size }

        /// `bytes` kept within the limit; bodies `headers` call JSON or a form are kept whole or not at all
        /// (the headers are only looked at for a body over the limit: most requests never pay for it).
        init(_ bytes: [UInt8], headers: HTTP.Headers) {
            size = bytes.count
            if bytes.count <= InspectorRecord.bodyLimit {
                self.bytes = bytes
            } else {
                self.bytes = InspectorRecord.isStructured(headers) ? [] : Array(bytes.prefix(InspectorRecord.bodyLimit))
            }
        }
    }

    /// The answer as kept.
    package struct Response: Sendable {
        package let status: Int
        package let headers: HTTP.Headers
        /// The body (a recorded stream's bytes joined are not made: `chunks` hold them).
        package let body: Body?
        /// A recorded stream's chunks, as far as `bodyLimit` bytes of them go.
        package let chunks: [ResponseChunk]?
        /// The size of a recorded stream, all chunks.
        package let chunksSize: Int
        /// A live stream: its body is not kept.
        package let live: Bool
    }

    /// The request and answer, while held.
    package struct Detail: Sendable {
        package let request: HTTP.Request
        package let requestBody: Body
        package let response: Response?
        /// What holding this detail costs against the store's budget, in bytes.
        package let cost: Int
    }

    /// The most bytes of one body the inspector keeps.
    package static let bodyLimit = 1 << 20

    package internal(set) var event: InspectorEvent
    /// Nil once the detail store dropped it for newer ones (or for an admin request, never kept).
    package var detail: Detail?
    /// Where "save to cassette" wrote it.
    package var saved: (cassette: String, interaction: Int)?

    /// The record of `request` answered with `answer` (with its event already made).
    init(event: InspectorEvent, request: HTTP.Request, answer: Answer) {
        self.event = event
        let requestBody = Body(request.body, headers: request.headers)
        var kept = request
        if !requestBody.isWhole { kept.body = requestBody.bytes }
        var cost = requestBody.bytes.count + Self.cost(of: request.headers) + request.target.utf8.count + 64
        var response: Response?
        if case .response(let status, let headers, let body) = answer.outcome {
            cost += Self.cost(of: headers)
            switch body {
            case .bytes(let bytes):
                let kept = Body(bytes, headers: headers)
                cost += kept.bytes.count
                response = Response(
                    status: status, headers: headers, body: kept, chunks: nil, chunksSize: 0, live: false)
            case .recorded(let chunks):
                var size = 0
                var keptCount = 0
                for chunk in chunks {
                    if size + chunk.bytes.count <= Self.bodyLimit { keptCount += 1 }
                    size += chunk.bytes.count
                }
                let keptChunks = keptCount == chunks.count ? chunks : Array(chunks.prefix(keptCount))
                cost += min(size, Self.bodyLimit) + 32 * keptCount
                response = Response(
                    status: status, headers: headers, body: nil, chunks: keptChunks, chunksSize: size, live: false)
            case .live:
                response = Response(status: status, headers: headers, body: nil, chunks: nil, chunksSize: 0, live: true)
            }
        }
        detail = Detail(request: kept, requestBody: requestBody, response: response, cost: cost)
    }

    /// Whether `headers` say the body is JSON or a form, whose secret-named fields only a whole body shows.
    static func isStructured(_ headers: HTTP.Headers) -> Bool {
        guard let type = headers["Content-Type"]?.lowercased() else { return false }
        return type.contains("json") || type.contains("x-www-form-urlencoded")
    }

    /// Roughly what `headers` hold, in bytes.
    static func cost(of headers: HTTP.Headers) -> Int {
        var total = 0
        for field in headers { total += field.name.utf8.count + field.value.utf8.count + 16 }
        return total
    }
}
