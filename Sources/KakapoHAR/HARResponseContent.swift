import KakapoCassette
import KakapoHTTP
import KakapoJSON

/// A HAR response's body made into what a cassette replays, with headers that agree with it.
///
/// HAR 1.2 says `content.text` is the decoded body, while the headers keep the wire's `Content-Encoding`.
/// Whether the text is decoded is read from the HAR's own fields, never guessed by trying to inflate it:
/// it holds the encoded bytes only when it is base64 and either Kakapo's export marked it so
/// (`"_encoded": true`) or its length is the wire's `bodySize` while `content.size`, the decoded length,
/// differs. A decoded body under a coding Kakapo writes (gzip, deflate) is encoded again; under any other
/// (br, zstd, a list, an unknown name) the coding is dropped and the body kept decoded. `Content-Length`
/// is then made to state the body. A streamed response's pieces come back from Kakapo's `_chunks`.
enum HARResponseContent {
    struct Result {
        var headers: HTTP.Headers
        var body: [UInt8]
        var chunks: [ResponseChunk]?
        /// `"_brokenOff": true` beside `_chunks` that are taken: the stream broke off after them.
        var brokenOff = false
        /// `"_abandoned": true` beside `_chunks` that are taken: the client left after them.
        var abandoned = false
    }

    static func read(_ response: HARImport.Node, headers: HTTP.Headers, report: inout HARImportReport) throws
        -> Result
    {
        var result = Result(headers: headers, body: [], chunks: nil)
        guard let content = response.optional("content") else { return result }
        let encoding = try content.optional("encoding")?.string()
        if let text = try content.optional("text")?.string() {
            result.body = try HARImport.body(text, encoding: encoding, at: content)
        }
        if let list = response.optional("_chunks") {
            let chunks = try self.chunks(list)
            // The pieces are the wire's bytes; they are taken when they add up to the decoded text.
            if ContentCoding.decoding(chunks.joinedBytes, headers: headers).content == result.body {
                result.body = chunks.joinedBytes
                result.chunks = chunks
                if let marked = response.optional("_brokenOff"), case .bool(true) = marked.value {
                    result.brokenOff = true
                }
                if let marked = response.optional("_abandoned"), case .bool(true) = marked.value {
                    result.abandoned = true
                }
                return result
            }
            report.note("_chunks ignored, they do not add up to content.text")
        }
        guard !result.body.isEmpty else { return result }
        let codings = headers.values(for: "Content-Encoding").joined(separator: ",").split(separator: ",")
            .map { $0.trimmingSpaces().lowercased() }.filter { !$0.isEmpty && $0 != "identity" }
        guard !codings.isEmpty else { return result }
        let name = codings.joined(separator: ", ")
        let coding = codings.count == 1 ? ContentCoding(header: codings[0]) : nil
        if try isEncoded(content, encoding: encoding, count: result.body.count, response: response) {
            if coding?.decodesWithinLimit(result.body) != true {
                report.note("content-encoding \(name) kept with the encoded bytes the HAR holds")
            }
            return result
        }
        if let coding {
            result.body = coding.encode(result.body)
            report.note("content-encoding \(name) written again from the decoded body")
        } else {
            result.headers.remove(name: "Content-Encoding")
            report.note("content-encoding \(name) dropped, body kept decoded")
        }
        if let length = result.headers["Content-Length"], length != String(result.body.count) {
            result.headers.replaceOrAdd(name: "Content-Length", value: String(result.body.count))
            report.note("Content-Length set to the length of the body replayed")
        }
        return result
    }

    /// Whether `content` holds the body as encoded on the wire rather than decoded (see the type's note).
    private static func isEncoded(_ content: HARImport.Node, encoding: String?, count: Int, response: HARImport.Node)
        throws -> Bool
    {
        guard encoding == "base64" else { return false }
        if let marked = content.optional("_encoded"), case .bool(true) = marked.value { return true }
        guard case .number(let bodySize)? = response.optional("bodySize")?.value, bodySize.intValue == count,
            case .number(let size)? = content.optional("size")?.value, let decodedSize = size.intValue
        else { return false }
        return decodedSize != count
    }

    /// Kakapo's `_chunks`: `[{"offsetMs": 0, "text": "..."}, {"offsetMs": 12.5, "text": "...", "encoding": "base64"}]`.
    /// The offsets may not decrease: each piece is sent that long after the answer began, in order.
    private static func chunks(_ list: HARImport.Node) throws -> [ResponseChunk] {
        var previous = 0.0
        return try list.array().map { entry in
            let offsetNode = try entry.member("offsetMs")
            let offset = try offsetNode.number()
            guard offset >= 0, offset <= Double(CassetteCodec.largestMilliseconds) else {
                throw offsetNode.failure(
                    "expected milliseconds from 0 to \(CassetteCodec.largestMilliseconds) (a week), not \(offset)")
            }
            guard offset >= previous else {
                throw offsetNode.failure(
                    "expected milliseconds no earlier than the piece before (\(previous)), not \(offset)")
            }
            previous = offset
            let text = try entry.member("text").string()
            let bytes = try HARImport.body(text, encoding: entry.optional("encoding")?.string(), at: entry)
            return ResponseChunk(offsetMilliseconds: offset, bytes: bytes)
        }
    }
}
