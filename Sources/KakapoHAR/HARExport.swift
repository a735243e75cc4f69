import Foundation
import KakapoCassette
import KakapoHTTP
import KakapoJSON

/// Writes a cassette as HAR 1.2, as browsers' devtools do: one page holding every entry, full URLs (from
/// `Host`; `http` unless the scheme is given), query strings, cookies read from `Cookie` and `Set-Cookie`,
/// decoded bodies as text (base64 when not UTF-8) with the wire's `Content-Encoding` kept and the
/// compression noted, timings from the recording. Two fields of Kakapo's own (HAR allows `_` names):
/// `_chunks` on a streamed response keeps its pieces and their offsets (with `"_brokenOff": true` when the
/// upstream broke the stream off after them, `"_abandoned": true` when its client left), and `"_encoded": true` on a
/// `content` marks a body kept as the wire's bytes because Kakapo cannot decode its coding (br, zstd).
/// An upgrade with a WebSocket conversation is written as Chrome writes one (`HARWebSocket`): a `ws:` or
/// `wss:` URL, `"_resourceType": "websocket"` and `_webSocketMessages`, with Kakapo's `_webSocketClose`.
public enum HARExport {
    /// The id of the one page an export writes, which every entry's `pageref` names.
    static let pageID = "page_1"

    /// The HAR document for `cassette`; `scheme` prefixes every URL and `title` names the page.
    public static func document(_ cassette: Cassette, scheme: String = "http", title: String = "kakapo cassette")
        -> JSONValue
    {
        let entries = cassette.interactions.map { entry($0, scheme: scheme) }
        let software: JSONValue = ["name": "kakapo", "version": .string(KakapoVersion.current)]
        return [
            "log": [
                "version": "1.2",
                "creator": software,
                "browser": software,
                "pages": [
                    [
                        "startedDateTime": .string(pageStart(cassette)),
                        "id": .string(pageID),
                        "title": .string(title),
                        "pageTimings": ["onContentLoad": -1, "onLoad": -1],
                    ]
                ],
                "entries": .array(entries),
            ]
        ]
    }

    /// The document as bytes, laid out for people.
    public static func bytes(_ cassette: Cassette, scheme: String = "http", title: String = "kakapo cassette")
        -> [UInt8]
    {
        var bytes = JSONWriter(layout: .readable).write(document(cassette, scheme: scheme, title: title))
        bytes.append(UInt8(ascii: "\n"))
        return bytes
    }

    /// When the earliest interaction was recorded (the epoch when none says).
    private static func pageStart(_ cassette: Cassette) -> String {
        let dated = cassette.interactions.compactMap { interaction in
            interaction.recordedDate.map { (date: $0, text: interaction.recordedAt) }
        }
        return dated.min { $0.date < $1.date }?.text ?? epoch
    }

    private static let epoch = "1970-01-01T00:00:00.000Z"

    private static func entry(_ interaction: Interaction, scheme: String) -> JSONValue {
        let request = interaction.request
        let response = interaction.response
        let host = request.headers["Host"] ?? "localhost"
        var origin = request.origin ?? scheme + "://" + host
        if interaction.webSocket != nil {
            // Chrome names a WebSocket by its ws: or wss: URL.
            origin = (origin.hasPrefix("https:") ? "wss" : "ws") + origin.drop { $0 != ":" }
        }
        var requestObject: JSONObject = [
            "method": .string(request.method.rawValue),
            "url": .string(origin + request.target),
            "httpVersion": "HTTP/1.1",
            "cookies": HARCookies.request(request.headers),
            "headers": headers(request.headers),
            "queryString": .array(
                request.queryItems.map {
                    [
                        "name": .string($0.name.removingPercentEncodingLeniently()),
                        "value": .string(($0.value ?? "").removingPercentEncodingLeniently()),
                    ]
                }),
            "headersSize": -1,
            "bodySize": .number(JSONNumber(request.body.count)),
        ]
        if !request.body.isEmpty {
            var postData = content(request.body)
            postData["mimeType"] = .string(request.headers["Content-Type"] ?? "application/octet-stream")
            postData["params"] = []
            requestObject["postData"] = .object(postData)
        }
        var responseObject: JSONObject = [
            "status": .number(JSONNumber(response.status)),
            "statusText": .string(ReasonPhrase.text(for: response.status)),
            "httpVersion": "HTTP/1.1",
            "cookies": HARCookies.response(response.headers, recordedAt: interaction.recordedDate),
            "headers": headers(responseHeaders(interaction)),
            "content": .object(responseContent(response)),
            "redirectURL": .string(response.headers["Location"] ?? ""),
            "headersSize": -1,
            "bodySize": .number(JSONNumber(response.body.count)),
        ]
        if let chunks = interaction.chunks {
            responseObject["_chunks"] = .array(
                chunks.map { chunk in
                    var object = content(chunk.bytes)
                    object["offsetMs"] = .number(JSONNumber(chunk.offsetMilliseconds))
                    return .object(object)
                })
            if interaction.brokenOff { responseObject["_brokenOff"] = true }
            if interaction.abandoned { responseObject["_abandoned"] = true }
        }
        let milliseconds = JSONValue.number(JSONNumber(interaction.durationMilliseconds))
        var entry: JSONObject = [
            "pageref": .string(pageID),
            "startedDateTime": .string(interaction.recordedDate == nil ? epoch : interaction.recordedAt),
            "time": milliseconds,
            "request": .object(requestObject),
            "response": .object(responseObject),
            "cache": [:],
            "timings": [
                "blocked": -1, "dns": -1, "connect": -1, "send": 0, "wait": milliseconds, "receive": 0, "ssl": -1,
            ],
        ]
        if let conversation = interaction.webSocket {
            HARWebSocket.add(
                conversation, start: interaction.recordedDate ?? Date(timeIntervalSince1970: 0), to: &entry)
        }
        return .object(entry)
    }

    /// The response's headers, with the conversation's subprotocol stated when they do not say it (a cassette
    /// edited by hand), since HAR keeps it only there.
    private static func responseHeaders(_ interaction: Interaction) -> HTTP.Headers {
        var headers = interaction.response.headers
        if let subprotocol = interaction.webSocket?.subprotocol, headers["Sec-WebSocket-Protocol"] == nil {
            headers.add(name: "Sec-WebSocket-Protocol", value: subprotocol)
        }
        return headers
    }

    /// HAR's `content`: the decoded body, or the wire's bytes (base64, `_encoded`) when its coding is one
    /// Kakapo cannot decode.
    private static func responseContent(_ response: HTTP.Response) -> JSONObject {
        let (decoded, coding) = ContentCoding.decoding(response.body, headers: response.headers)
        let named = response.headers.values(for: "Content-Encoding").contains {
            let name = $0.trimmingSpaces().lowercased()
            return !name.isEmpty && name != "identity"
        }
        var object: JSONObject
        if coding == nil && named && !response.body.isEmpty {
            object = ["text": .string(Data(response.body).base64EncodedString()), "encoding": "base64"]
            object["_encoded"] = true
        } else {
            object = content(decoded)
        }
        object["size"] = .number(JSONNumber(decoded.count))
        if decoded.count >= response.body.count {
            object["compression"] = .number(JSONNumber(decoded.count - response.body.count))
        }
        object["mimeType"] = .string(response.headers["Content-Type"] ?? "")
        return object
    }

    private static func headers(_ headers: HTTP.Headers) -> JSONValue {
        .array(headers.map { ["name": .string($0.name), "value": .string($0.value)] })
    }

    /// `{"text": ...}`, with `"encoding": "base64"` for bytes that are not UTF-8.
    private static func content(_ bytes: [UInt8]) -> JSONObject {
        if let text = String(validating: bytes, as: UTF8.self) { return ["text": .string(text)] }
        return ["text": .string(Data(bytes).base64EncodedString()), "encoding": "base64"]
    }
}

/// Reason phrases for the common statuses (HAR's `statusText`).
enum ReasonPhrase {
    static func text(for status: Int) -> String {
        switch status {
        case 200: return "OK"
        case 201: return "Created"
        case 202: return "Accepted"
        case 204: return "No Content"
        case 301: return "Moved Permanently"
        case 302: return "Found"
        case 303: return "See Other"
        case 304: return "Not Modified"
        case 307: return "Temporary Redirect"
        case 308: return "Permanent Redirect"
        case 400: return "Bad Request"
        case 401: return "Unauthorized"
        case 403: return "Forbidden"
        case 404: return "Not Found"
        case 409: return "Conflict"
        case 422: return "Unprocessable Content"
        case 429: return "Too Many Requests"
        case 500: return "Internal Server Error"
        case 502: return "Bad Gateway"
        case 503: return "Service Unavailable"
        case 504: return "Gateway Timeout"
        default: return ""
        }
    }
}
