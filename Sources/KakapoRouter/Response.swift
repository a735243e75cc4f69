import KakapoHTTP
import KakapoJSON

/// What a handler returns when a plain value is not enough: a status, header fields and a body.
///
/// ```swift
/// router.post("/users") { request in
///     Response(statusCode: 201, body: user, headerFields: ["Location": "/users/\(user.id)"])
/// }
/// ```
public struct Response: CustomSerializable {
    public var statusCode: Int
    /// The body, serialized as JSON; nil for an empty body.
    public var body: (any Serializable)?
    public var headerFields: [String: String]?
    /// Raw bytes to send instead of JSON (for text, HTML, binary answers).
    public var bytes: [UInt8]?

    /// A JSON answer.
    public init(statusCode: Int, body: (any Serializable)? = nil, headerFields: [String: String]? = nil) {
        self.statusCode = statusCode
        self.body = body
        self.headerFields = headerFields
    }

    /// An answer with raw bytes; set a `Content-Type` in `headerFields`.
    public init(statusCode: Int, bytes: [UInt8], headerFields: [String: String]? = nil) {
        self.statusCode = statusCode
        self.bytes = bytes
        self.headerFields = headerFields
    }

    public func customSerialized(transformingKeys keyTransformer: KeyTransformer?) -> JSONValue? {
        body?.serialized(transformingKeys: keyTransformer)
    }

    /// The HTTP response: JSON gets `Content-Type: application/json` unless the header fields say
    /// otherwise. Header names are written in ascending order, so output is deterministic.
    public var httpResponse: HTTP.Response {
        var headers = HTTP.Headers()
        for (name, value) in (headerFields ?? [:]).sorted(by: { $0.key < $1.key }) {
            headers.add(name: name, value: value)
        }
        if let bytes { return HTTP.Response(status: statusCode, headers: headers, body: bytes) }
        guard let json = serialized() else { return HTTP.Response(status: statusCode, headers: headers) }
        if !headers.contains("Content-Type") { headers.add(name: "Content-Type", value: "application/json") }
        return HTTP.Response(status: statusCode, headers: headers, body: JSONWriter().write(json))
    }

    /// The HTTP response for any handler result: a `Response` as it says, any other value as 200 JSON,
    /// nothing as 200 with an empty body.
    public static func http(for result: (any Serializable)?) -> HTTP.Response {
        if let response = result as? Response { return response.httpResponse }
        if let document = result as? JSONAPIErrorDocument {
            return Response(
                statusCode: document.status, body: document,
                headerFields: ["Content-Type": "application/vnd.api+json"]
            ).httpResponse
        }
        return Response(statusCode: 200, body: result).httpResponse
    }
}
