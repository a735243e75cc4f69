import KakapoCassette
import KakapoHTTP
import KakapoJSON

/// Recorded answers to JSON-RPC 2.0 requests, replayed with the ids of the requests they answer. Matching
/// leaves ids out (`JSONRPCMessage`), so a client that numbers its requests 41, 42, "abc" replays a
/// recording made with 1, 2, 3; its client would reject an answer with the recorded id, so each JSON-RPC
/// response in the answer whose `id` is a recorded request's id gets the id of the live request in the same
/// place (the same position in a batch), spelled as the client sent it. Responses are found in a JSON body
/// (an object or a batch array) and in the `data` of each server-sent event (MCP's streamable HTTP); ids
/// that no recorded request had (a server-to-client request inside the stream) stay as they are. Only the
/// id's bytes change: the rest of the body, chunk offsets and the stream's break are kept, a
/// `Content-Length` states the new size, and gzip or deflate bodies are re-encoded.
enum JSONRPCReplay {
    typealias Splice = AnswerSplicing.Splice

    /// `answer`, the recording made for `recorded`, with its responses carrying the ids of `request`; nil
    /// when it keeps its recorded bytes (not JSON-RPC, the same ids, no response with a recorded id, a body
    /// coded in a way Kakapo cannot re-encode), so the transport may serve its prepared wire form. A
    /// rewritten answer has no `replay` position: its bytes belong to this request alone.
    static func answer(_ answer: Answer, to request: HTTP.Request, recorded: HTTP.Request) -> Answer? {
        guard case .response = answer.outcome,
            let live = JSONRPCMessage.requests(
                inBody: ContentCoding.decoding(request.body, headers: request.headers).content),
            let original = JSONRPCMessage.requests(
                inBody: ContentCoding.decoding(recorded.body, headers: recorded.headers).content)
        else { return nil }
        let ids = IDMap(live: live, recorded: original)
        guard !ids.isEmpty else { return nil }
        return AnswerSplicing.rewrite(answer) { content, headers in
            headers.announcesEventStream
                ? eventSplices(in: content, ids: ids) : jsonSplices(in: content, range: 0..<content.count, ids: ids)
        }
    }

    /// Recorded request ids (as keys) and the live ids that replace them (as the client wrote them); the
    /// same for MCP progress tokens, which progress notifications carry back.
    struct IDMap {
        private var replacements: [JSONValue: [UInt8]] = [:]
        private var progressTokens: [JSONValue: [UInt8]] = [:]

        /// Pairs each recorded request with the live one in the same place; a pair whose ids are equal, or
        /// where either is a notification, replaces nothing.
        init(live: [JSONObject], recorded: [JSONObject]) {
            for (liveRequest, recordedRequest) in zip(live, recorded) {
                if let liveToken = JSONRPCMessage.progressToken(of: liveRequest),
                    let recordedToken = JSONRPCMessage.progressToken(of: recordedRequest), liveToken != recordedToken
                {
                    let key = Self.key(recordedToken)
                    if progressTokens[key] == nil { progressTokens[key] = JSONWriter().write(liveToken) }
                }
                guard let liveID = liveRequest["id"], let recordedID = recordedRequest["id"], !recordedID.isNull,
                    liveID != recordedID
                else { continue }
                let key = Self.key(recordedID)
                if replacements[key] == nil { replacements[key] = JSONWriter().write(liveID) }
            }
        }

        var isEmpty: Bool { replacements.isEmpty && progressTokens.isEmpty }

        /// The bytes of the live id that replaces `id`, if it was a recorded request's.
        func replacement(for id: JSONValue) -> [UInt8]? { replacements[Self.key(id)] }

        /// The bytes of the live progress token that replaces `token`, if it was a recorded request's.
        func replacement(forProgressToken token: JSONValue) -> [UInt8]? { progressTokens[Self.key(token)] }

        /// `1`, `1.0` and `1e0` are one id; `1` and `"1"` are two.
        private static func key(_ id: JSONValue) -> JSONValue {
            if case .number(let number) = id, let integer = number.intValue { return .number(JSONNumber(integer)) }
            return id
        }
    }

    /// The splices that give each JSON-RPC response in the JSON text `bytes[range]` (an object or a batch
    /// array) its live id; none when the text is not JSON.
    static func jsonSplices(in bytes: [UInt8], range: Range<Int>, ids: IDMap) -> [Splice] {
        guard JSONParser.looksLikeContainer(Array(bytes[range].prefix(64))),
            let json = try? JSONParser.parse(bytes[range])
        else { return [] }
        var scanner = Spans(bytes: bytes, end: range.upperBound)
        let start = scanner.skippingWhitespace(from: range.lowerBound)
        switch json {
        case .object(let object):
            return splice(object, at: start, scanner: &scanner, ids: ids).map { [$0] } ?? []
        case .array(let elements):
            let spans = scanner.elements(ofArrayAt: start)
            guard spans.count == elements.count else { return [] }
            return zip(elements, spans).compactMap { element, span in
                element.objectValue.flatMap { splice($0, at: span.lowerBound, scanner: &scanner, ids: ids) }
            }
        default:
            return []
        }
    }

    /// The splice that gives `object`, written at `start`, the live id (a response) or progress token (a
    /// progress notification), when a recorded request had the one it carries.
    private static func splice(_ object: JSONObject, at start: Int, scanner: inout Spans, ids: IDMap) -> Splice? {
        idSplice(object, at: start, scanner: &scanner, ids: ids)
            ?? progressSplice(object, at: start, scanner: &scanner, ids: ids)
    }

    /// The splice that gives an MCP progress notification (`notifications/progress`), written at `start`,
    /// the live request's progress token in `params.progressToken`.
    private static func progressSplice(_ object: JSONObject, at start: Int, scanner: inout Spans, ids: IDMap)
        -> Splice?
    {
        guard object["jsonrpc"] == .string("2.0"), object["method"] == .string("notifications/progress"),
            let token = object["params"]?.objectValue?["progressToken"],
            let replacement = ids.replacement(forProgressToken: token),
            let params = scanner.members(ofObjectAt: start).first(where: { scanner.isKey($0.key, "params") })?.value,
            let span = scanner.members(ofObjectAt: params.lowerBound).first(where: {
                scanner.isKey($0.key, "progressToken")
            })?.value
        else { return nil }
        return Splice(range: span, bytes: replacement)
    }

    /// The splice that gives `object`, written at `start`, the live id, when it is a JSON-RPC response
    /// whose id a recorded request had.
    private static func idSplice(_ object: JSONObject, at start: Int, scanner: inout Spans, ids: IDMap)
        -> Splice?
    {
        guard object["jsonrpc"] == .string("2.0"), object["method"] == nil,
            object["result"] != nil || object["error"] != nil,
            let id = object["id"], let replacement = ids.replacement(for: id),
            let span = scanner.members(ofObjectAt: start).first(where: { scanner.isKey($0.key, "id") })?.value
        else { return nil }
        return Splice(range: span, bytes: replacement)
    }

    /// The splices of every server-sent event in `bytes` whose `data` (its `data:` lines joined with
    /// newlines) is a JSON-RPC response or batch. Lines end with `\n` or `\r\n`.
    static func eventSplices(in bytes: [UInt8], ids: IDMap) -> [Splice] {
        var splices: [Splice] = []
        var dataLines: [Range<Int>] = []
        func endEvent() {
            defer { dataLines.removeAll() }
            guard let first = dataLines.first else { return }
            guard dataLines.count > 1 else {
                splices += jsonSplices(in: bytes, range: first, ids: ids)
                return
            }
            // Several data lines: the JSON is their values joined with newlines. An id's bytes hold no
            // newline, so each splice lies within one line.
            var payload: [UInt8] = []
            var starts: [Int] = []
            for line in dataLines {
                if !payload.isEmpty { payload.append(0x0A) }
                starts.append(payload.count)
                payload += bytes[line]
            }
            var line = 0
            for splice in jsonSplices(in: payload, range: 0..<payload.count, ids: ids) {
                while line + 1 < starts.count, starts[line + 1] <= splice.range.lowerBound { line += 1 }
                let lower = dataLines[line].lowerBound + splice.range.lowerBound - starts[line]
                splices.append(Splice(range: lower..<(lower + splice.range.count), bytes: splice.bytes))
            }
        }
        let data = Array("data:".utf8)
        var index = 0
        while index < bytes.count {
            let lineEnd = bytes[index...].firstIndex(of: 0x0A) ?? bytes.count
            let contentEnd = lineEnd > index && bytes[lineEnd - 1] == 0x0D ? lineEnd - 1 : lineEnd
            if contentEnd == index {
                endEvent()
            } else if bytes[index..<contentEnd].starts(with: data) {
                var valueStart = index + data.count
                if valueStart < contentEnd, bytes[valueStart] == 0x20 { valueStart += 1 }
                dataLines.append(valueStart..<contentEnd)
            }
            index = lineEnd + 1
        }
        endEvent()
        return splices
    }
}
