import Foundation
import KakapoCassette
import KakapoHTTP
import KakapoJSON

/// The JSON of `GET /__kakapo/requests/{id}` and of a cassette interaction's detail: headers as `[name,
/// value]` pairs and bodies as `{"size", "kept", "truncated", "text" | "base64"}`, redacted by the configured
/// `Redactor` exactly as a recording would be. Made only when asked for, off the request's path.
enum InspectorDetail {
    /// The detail of a journaled request: its event's fields, the request and response (redacted), a miss's
    /// report, where it was saved and whether it can be.
    static func json(_ record: InspectorRecord, pipeline: RequestPipeline) -> JSONValue? {
        guard let detail = record.detail, case .object(var object) = try? JSONParser.parse(record.event.json)
        else { return nil }
        let redactor = pipeline.configuration.redactor
        var response = HTTP.Response(status: detail.response?.status ?? 0, headers: detail.response?.headers ?? [:])
        if let body = detail.response?.body { response.body = body.bytes }
        let chunks = detail.response?.chunks
        if let chunks { response.body = chunks.joinedBytes }
        let (clean, _) = redactor.redact(
            Interaction(
                request: detail.request, response: response, recordedAt: "", durationMilliseconds: 0, chunks: chunks))
        object["request"] = request(
            clean.request, size: detail.requestBody.size, keptBytes: detail.requestBody.bytes.count,
            url: record.event.url, target: record.event.target)
        if let kept = detail.response {
            object["response"] = Self.response(
                clean.response, size: kept.chunks != nil ? kept.chunksSize : kept.body?.size ?? 0,
                keptBytes: kept.chunks != nil
                    ? min(kept.chunksSize, InspectorRecord.bodyLimit) : kept.body?.bytes.count ?? 0,
                chunks: clean.chunks, live: kept.live)
        }
        if record.event.webSocket, let interaction = record.event.interaction,
            let conversation = recordedConversation(at: interaction, session: record.event.session, pipeline: pipeline)
        {
            object["webSocket"] = webSocket(conversation)
        }
        if record.event.source == ResponseSource.miss.rawValue, let body = detail.response?.body?.bytes,
            case .object(var miss)? = try? JSONParser.parse(body)
        {
            if miss["cassette"] == nil, let session = pipeline.session { miss["cassette"] = .string(session.path) }
            // The report again, with each difference as a field: the miss body leaves the fields out.
            if let cassette = record.event.session.map({ pipeline.sessions?.session($0)?.cassette }) ?? pipeline.session
            {
                var request = detail.request
                request.headers.remove(name: "X-Kakapo-Session")
                request.headers.remove(name: "Proxy-Authorization")
                miss["nearest"] = cassette.missReport(for: request).json(fields: true)["nearest"]
            }
            object["miss"] = .object(miss)
        }
        if let saved = record.saved {
            object["saved"] = [
                "cassette": .string(saved.cassette), "interaction": .number(JSONNumber(saved.interaction)),
            ]
        }
        let refusal = InspectorEndpoints.saveRefusal(record, pipeline: pipeline)
        object["canSave"] = .bool(refusal == nil)
        if let refusal { object["cannotSave"] = .string(refusal) }
        return .object(object)
    }

    /// `{"status", "headers", "body", "chunks"}` (a recorded stream's chunks, with their offsets) or, for a
    /// live stream, `{"status", "headers", "live": true}`; `size` is the body's size as it was.
    static func response(
        _ response: HTTP.Response, size: Int, keptBytes: Int? = nil, chunks: [ResponseChunk]?, live: Bool
    ) -> JSONValue {
        var answer: JSONObject = ["status": .number(JSONNumber(response.status)), "headers": headers(response.headers)]
        if live {
            answer["live"] = true
            return .object(answer)
        }
        answer["body"] = body(response.body, size: size, keptBytes: keptBytes, headers: response.headers)
        if let chunks {
            answer["chunks"] = .array(
                chunks.map { chunk in
                    var item: JSONObject = [
                        "offsetMs": .number(JSONNumber(literal: InspectorEvent.decimal(chunk.offsetMilliseconds))),
                        "size": .number(JSONNumber(chunk.bytes.count)),
                    ]
                    if let text = text(chunk.bytes, headers: response.headers) {
                        item["text"] = .string(text)
                    } else {
                        item["base64"] = .string(Data(chunk.bytes).base64EncodedString())
                    }
                    return .object(item)
                })
        }
        return .object(answer)
    }

    /// A request as the detail shows it.
    static func request(_ request: HTTP.Request, size: Int, keptBytes: Int? = nil, url: String, target: String)
        -> JSONValue
    {
        [
            "method": .string(request.method.rawValue), "target": .string(target), "url": .string(url),
            "headers": headers(request.headers),
            "body": body(request.body, size: size, keptBytes: keptBytes, headers: request.headers),
        ]
    }

    /// `[[name, value], ...]` in their order.
    static func headers(_ headers: HTTP.Headers) -> JSONValue {
        .array(headers.map { .array([.string($0.name), .string($0.value)]) })
    }

    /// `{"size", "kept", "truncated", "text" | "base64"}` for the `kept` bytes (redacted) of a body of `size`
    /// bytes, of which `keptBytes` were kept before redaction (all of `kept` when nil).
    static func body(_ kept: [UInt8], size: Int, keptBytes: Int? = nil, headers: HTTP.Headers) -> JSONValue {
        let keptBytes = keptBytes ?? kept.count
        var object: JSONObject = [
            "size": .number(JSONNumber(size)), "kept": .number(JSONNumber(keptBytes)),
            "truncated": .bool(keptBytes < size),
        ]
        if let text = text(kept, headers: headers) {
            object["text"] = .string(text)
        } else {
            object["base64"] = .string(Data(kept).base64EncodedString())
        }
        return .object(object)
    }

    /// The bytes as text when they are valid UTF-8 and their type is not an image or opaque bytes.
    private static func text(_ bytes: [UInt8], headers: HTTP.Headers) -> String? {
        let type = (headers["Content-Type"] ?? "").lowercased()
        if type.hasPrefix("image/") || type.hasPrefix("application/octet-stream") || type.hasPrefix("audio/")
            || type.hasPrefix("video/")
        {
            return nil
        }
        if headers["Content-Encoding"].map({ !$0.isEmpty && $0.lowercased() != "identity" }) == true { return nil }
        return String(validating: bytes, as: UTF8.self)
    }

    /// `{"messages": [{"from", "offsetMs", "text" | "base64"}], "close": {...}}`.
    static func webSocket(_ conversation: WebSocketConversation) -> JSONValue {
        var object: JSONObject = [
            "messages": .array(
                conversation.messages.map { message in
                    var item: JSONObject = [
                        "from": .string(message.from.rawValue),
                        "offsetMs": .number(JSONNumber(literal: InspectorEvent.decimal(message.offsetMilliseconds))),
                    ]
                    switch message.payload {
                    case .text(let text): item["text"] = .string(text)
                    case .binary(let bytes): item["base64"] = .string(Data(bytes).base64EncodedString())
                    }
                    return .object(item)
                })
        ]
        if let subprotocol = conversation.subprotocol { object["subprotocol"] = .string(subprotocol) }
        if let close = conversation.close {
            var item: JSONObject = ["from": .string(close.from.rawValue), "reason": .string(close.reason)]
            item["code"] = close.code.map { .number(JSONNumber($0)) } ?? .null
            if let offset = close.offsetMilliseconds {
                item["offsetMs"] = .number(JSONNumber(literal: InspectorEvent.decimal(offset)))
            }
            object["close"] = .object(item)
        }
        return .object(object)
    }

    /// The conversation recorded at `position` of the server's cassette, or of the open session `session`.
    private static func recordedConversation(at position: Int, session: String?, pipeline: RequestPipeline)
        -> WebSocketConversation?
    {
        let cassette = session.map { pipeline.sessions?.session($0)?.cassette } ?? pipeline.session
        guard let interactions = cassette?.snapshot.interactions, interactions.indices.contains(position) else {
            return nil
        }
        return interactions[position].webSocket
    }
}
