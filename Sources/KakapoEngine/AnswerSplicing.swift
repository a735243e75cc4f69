import KakapoCassette
import KakapoHTTP

/// A recorded answer rewritten for the live request (JSON-RPC ids, `JSONRPCReplay`; echoes given back,
/// `EchoReplay`): replacements are found in its content, decoded when it is gzip, deflate, br or zstd,
/// and made in its bytes, or in a stream's chunks, each keeping its offset. Only the replaced bytes
/// change: the body is encoded again, a `Content-Length` states the new size, and the rewritten answer
/// has no `replay` position, since its bytes belong to this request alone.
enum AnswerSplicing {
    /// A replacement of the bytes in `range` of a body.
    struct Splice: Equatable {
        let range: Range<Int>
        let bytes: [UInt8]
    }

    /// `answer` with its headers changed by `headers` (which says whether it changed any) and the splices
    /// `splices` finds in its content (given the answer's headers) made, in order and not overlapping; nil
    /// when nothing changed, or its body cannot be rewritten (a coding Kakapo cannot encode again, a coded
    /// stream) and its headers did not change.
    static func rewrite(
        _ answer: Answer, headers rewriteHeaders: (inout HTTP.Headers) -> Bool = { _ in false },
        splices: ([UInt8], HTTP.Headers) -> [Splice]
    ) -> Answer? {
        guard case .response(let status, var headers, let body) = answer.outcome else { return nil }
        let headersChanged = rewriteHeaders(&headers)
        var rewritten: Answer.Body?
        if let content = content(of: body, headers: headers) {
            let found = splices(content, headers)
            if !found.isEmpty {
                let length: Int
                switch body {
                case .recorded(let chunks):
                    let pieces = apply(found, to: chunks)
                    rewritten = .recorded(pieces)
                    length = pieces.reduce(0) { $0 + $1.bytes.count }
                default:
                    let plain = apply(found, to: content)
                    let bytes = ContentCoding(header: headers["Content-Encoding"])?.encode(plain) ?? plain
                    rewritten = .bytes(bytes)
                    length = bytes.count
                }
                if headers["Content-Length"] != nil {
                    headers.replaceOrAdd(name: "Content-Length", value: String(length))
                }
            }
        }
        guard headersChanged || rewritten != nil else { return nil }
        var copy = answer
        copy.outcome = .response(status: status, headers: headers, body: rewritten ?? body)
        copy.replay = nil
        return copy
    }

    /// The content of a body that can be rewritten: its bytes decoded, or a stream's chunks joined when it
    /// has no coding; nil otherwise.
    private static func content(of body: Answer.Body, headers: HTTP.Headers) -> [UInt8]? {
        let encoding = headers["Content-Encoding"]
        let coding = ContentCoding(header: encoding)
        if encoding != nil && coding == nil { return nil }
        switch body {
        case .bytes(let bytes):
            guard let coding else { return bytes }
            return coding.decode(bytes)
        case .recorded(let chunks) where coding == nil: return chunks.joinedBytes
        default: return nil
        }
    }

    /// `bytes` with the splices (in order, not overlapping) made.
    static func apply(_ splices: [Splice], to bytes: [UInt8]) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count + 16 * splices.count)
        var cursor = 0
        for splice in splices {
            output += bytes[cursor..<splice.range.lowerBound]
            output += splice.bytes
            cursor = splice.range.upperBound
        }
        output += bytes[cursor...]
        return output
    }

    /// `chunks` with the splices (positions in their joined bytes) made; each chunk keeps its offset, and a
    /// splice that crosses from one chunk into the next is made in the first.
    static func apply(_ splices: [Splice], to chunks: [ResponseChunk]) -> [ResponseChunk] {
        var pending = splices[...]
        var start = 0
        var cursor = 0
        return chunks.map { chunk in
            let end = start + chunk.bytes.count
            var bytes: [UInt8] = []
            var position = max(start, cursor)
            while let splice = pending.first, splice.range.lowerBound < end {
                pending.removeFirst()
                if splice.range.lowerBound > position {
                    bytes += chunk.bytes[(position - start)..<(splice.range.lowerBound - start)]
                }
                bytes += splice.bytes
                position = max(position, splice.range.upperBound)
            }
            if position < end { bytes += chunk.bytes[(position - start)...] }
            cursor = max(cursor, position)
            start = end
            return ResponseChunk(offsetMilliseconds: chunk.offsetMilliseconds, bytes: bytes)
        }
    }
}
