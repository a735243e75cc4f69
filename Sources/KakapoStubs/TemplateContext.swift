import Foundation
import KakapoHTTP
import KakapoJSON
import KakapoRouter

/// What a template can read from one request: path parameters, query, headers and the JSON body
/// (parsed at most once, and only when a tag or a condition needs it).
final class TemplateContext {
    let request: HTTP.Request
    /// The parameters of the route being tried.
    var parameters: RouteParameters
    private var parsedQuery: [QueryItem]?
    private var parsedBody: JSONValue??
    /// `{{uuid}}` and `{{now}}`, made on first use: one value per answer.
    private var answerUUID: String?
    private var answerTime: String?

    init(request: HTTP.Request, parameters: RouteParameters) {
        self.request = request
        self.parameters = parameters
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
        }
    }
}
