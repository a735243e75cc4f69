import Foundation
import KakapoCassette
import KakapoHTTP
import KakapoJSON

/// Writes a cassette as HAR 1.2, as browsers' devtools do: full URLs (from `Host`; `http` unless the
/// scheme is given), query strings, decoded bodies as text (base64 when not UTF-8) with the wire's
/// `Content-Encoding` kept and the compression noted, timings from the recording.
public enum HARExport {
    /// The HAR document for `cassette`; `scheme` prefixes every URL.
    public static func document(_ cassette: Cassette, scheme: String = "http") -> JSONValue {
        let entries = cassette.interactions.map { entry($0, scheme: scheme) }
        return [
            "log": [
                "version": "1.2",
                "creator": ["name": "kakapo", "version": "1"],
                "pages": [],
                "entries": .array(entries),
            ]
        ]
    }

    /// The document as bytes, laid out for people.
    public static func bytes(_ cassette: Cassette, scheme: String = "http") -> [UInt8] {
        var bytes = JSONWriter(layout: .readable).write(document(cassette, scheme: scheme))
        bytes.append(UInt8(ascii: "\n"))
        return bytes
    }

    private static func entry(_ interaction: Interaction, scheme: String) -> JSONValue {
        let request = interaction.request
        let response = interaction.response
        let host = request.headers["Host"] ?? "localhost"
        var requestObject: JSONObject = [
            "method": .string(request.method.rawValue),
            "url": .string((request.origin ?? scheme + "://" + host) + request.target),
            "httpVersion": "HTTP/1.1",
            "cookies": [],
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
            requestObject["postData"] = .object(postData)
        }
        let decoded = ContentCoding.decoding(response.body, headers: response.headers).content
        var contentObject = content(decoded)
        contentObject["size"] = .number(JSONNumber(decoded.count))
        contentObject["compression"] = .number(JSONNumber(decoded.count - response.body.count))
        contentObject["mimeType"] = .string(response.headers["Content-Type"] ?? "")
        let responseObject: JSONObject = [
            "status": .number(JSONNumber(response.status)),
            "statusText": .string(ReasonPhrase.text(for: response.status)),
            "httpVersion": "HTTP/1.1",
            "cookies": [],
            "headers": headers(response.headers),
            "content": .object(contentObject),
            "redirectURL": .string(response.headers["Location"] ?? ""),
            "headersSize": -1,
            "bodySize": .number(JSONNumber(response.body.count)),
        ]
        return [
            "startedDateTime": .string(
                interaction.recordedAt.isEmpty ? "1970-01-01T00:00:00.000Z" : interaction.recordedAt),
            "time": .number(JSONNumber(interaction.durationMilliseconds)),
            "request": .object(requestObject),
            "response": .object(responseObject),
            "cache": [:],
            "timings": ["send": 0, "wait": .number(JSONNumber(interaction.durationMilliseconds)), "receive": 0],
        ]
    }

    private static func headers(_ headers: HTTPHeaders) -> JSONValue {
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
