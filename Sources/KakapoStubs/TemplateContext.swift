import Foundation
import KakapoHTTP
import KakapoJSON
import KakapoRouter

/// What a template can read from one request: path parameters, query, headers and the JSON body
/// (parsed at most once, and only when a tag or a condition needs it); for a websocket rule, also the
/// client's message (its JSON parsed at most once too).
final class TemplateContext {
    let request: HTTP.Request
    /// The parameters of the route being tried.
    var parameters: RouteParameters
    /// The client's WebSocket message a websocket rule answers; nil everywhere else.
    let message: WebSocketMessage.Payload?
    private var parsedQuery: [QueryItem]?
    private var parsedBody: JSONValue??
    private var parsedMessage: JSONValue??
    /// `{{uuid}}` and `{{now}}`, made on first use: one value per answer.
    private var answerUUID: String?
    private var answerTime: String?
    /// When the cassette's recording of this request was made (`{{recordedAt}}`); nil without one.
    private let recordedAt: () -> String?

    init(
        request: HTTP.Request, parameters: RouteParameters, message: WebSocketMessage.Payload? = nil,
        recordedAt: @escaping () -> String? = { nil }
    ) {
        self.request = request
        self.parameters = parameters
        self.message = message
        self.recordedAt = recordedAt
    }

    /// The query items, percent-decoded (`+` is a space).
    var query: [QueryItem] {
        if let parsedQuery { return parsedQuery }
        let decoded = request.decodedQueryItems
        parsedQuery = decoded
        return decoded
    }

    /// The body as JSON, or nil when it is empty or not JSON.
    var body: JSONValue? {
        if let parsedBody { return parsedBody }
        let parsed = request.body.isEmpty ? nil : try? JSONParser.parse(request.body)
        parsedBody = .some(parsed)
        return parsed
    }

    /// The text of the client's message; nil for a binary message or none.
    var messageText: String? {
        guard case .text(let text)? = message else { return nil }
        return text
    }

    /// The client's text message as JSON, or nil when it is binary, none, or not JSON.
    var messageJSON: JSONValue? {
        if let parsedMessage { return parsedMessage }
        let parsed = messageText.flatMap { text in try? JSONParser.parse(text) }
        parsedMessage = .some(parsed)
        return parsed
    }

    /// The value a tag names; nil when the request has nothing there.
    func value(of tag: TemplateTag) -> JSONValue? {
        switch tag {
        case .parameter(let name):
            if name == "**" { return .string(parameters.catchAll.joined(separator: "/")) }
            return parameters[name].map(JSONValue.string)
        case .query(let name): return query.first { $0.name == name }.map { .string($0.value ?? "") }
        case .header(let name): return request.headers[name].map(JSONValue.string)
        case .body(let pointer): return body?[pointer: pointer]
        case .now(fresh: true): return .string(UTCTimestamp.now())
        case .now(fresh: false):
            let time = answerTime ?? UTCTimestamp.now()
            answerTime = time
            return .string(time)
        case .uuid(fresh: true): return .string(UUID().uuidString.lowercased())
        case .uuid(fresh: false):
            let uuid = answerUUID ?? UUID().uuidString.lowercased()
            answerUUID = uuid
            return .string(uuid)
        case .recordedAt: return recordedAt().map(JSONValue.string)
        case .messageText: return messageText.map(JSONValue.string)
        case .messageJSON(let pointer): return messageJSON?[pointer: pointer]
        }
    }
}
