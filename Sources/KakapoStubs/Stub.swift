import KakapoHTTP
import KakapoJSON
import KakapoRouter
import Synchronization

/// A declarative route from a routes file or the admin API: a method and path pattern (optionally for one
/// host), conditions on the request, the answers it gives in turn (or, for WebSocket upgrades, a scripted
/// conversation), and optional latency and faults.
public final class Stub: Sendable {
    /// Names the route in `GET /__kakapo/routes` and `DELETE /__kakapo/routes/{id}`.
    public let id: String
    /// The route object as it was written.
    public let definition: JSONValue
    let method: HTTP.Method?
    let base: BaseURL?
    let pattern: RoutePattern
    let conditions: [RequestCondition]
    let responses: [ResponseTemplate]
    /// The scripted conversation of a `websocket` route, which answers upgrade requests only.
    let webSocket: WebSocketScript?
    let cycle: Bool
    let latency: Latency?
    let fault: Fault?
    /// How many times the route has answered, for `responses`.
    private let calls = Atomic<Int>(0)

    static let keys = [
        "id", "name", "description", "method", "path", "host", "when", "response", "responses", "cycle", "latency",
        "fault", "websocket",
    ]

    /// Reads one route object; `index` names it when it has no `id`.
    init(_ node: DefinitionNode, index: Int, context: DefinitionContext, fallbackID: String? = nil)
        throws(RoutesError)
    {
        let object = try node.object(allowed: Stub.keys)
        definition = node.value
        id = try object["id"]?.scalarText() ?? fallbackID ?? "\(context.idPrefix)#\(index)"
        if let method = object["method"] {
            let name = try method.string().uppercased()
            guard !name.isEmpty, name.allSatisfy({ $0.isLetter || $0 == "-" }) else {
                throw method.error("expected an HTTP method such as GET or POST")
            }
            self.method = name == "ANY" ? nil : HTTP.Method(name)
        } else {
            method = nil
        }
        guard let path = object["path"] else { throw object.error("a route needs a \"path\"") }
        let text = try path.string()
        do {
            pattern = try RoutePattern(text)
        } catch {
            throw path.error(error.message)
        }
        if let host = object["host"] {
            let text = try host.string()
            do {
                base = try BaseURL(text)
            } catch {
                throw host.error(error.message)
            }
        } else {
            base = nil
        }
        conditions =
            try object["when"].map { (node) throws(RoutesError) in try RequestCondition.conditions(node) }
            ?? []
        let scope = TemplateScope(
            route: (method?.rawValue ?? "ANY") + " " + text,
            parameters: pattern.segments.compactMap { segment in
                switch segment {
                case .parameter(let name): return name
                case .catchAll: return "**"
                default: return nil
                }
            })
        fault = try object["fault"].map { (node) throws(RoutesError) in try Fault(node) }
        let routeMethod = method
        webSocket = try object["websocket"].map { (node) throws(RoutesError) in
            try Stub.script(node, of: object, method: routeMethod, scope: scope)
        }
        if webSocket != nil {
            responses = []
        } else if !object.has("response") && !object.has("responses"), let fault {
            // A fault that strikes every call never needs the route's response.
            guard fault.rate >= 1 else {
                throw object.error(
                    "a route whose fault strikes only part of the calls needs a response (or responses) for the others")
            }
            responses = []
        } else {
            let (key, answers) = try object.exactlyOne(of: ["response", "responses"], what: "a route")
            if key == "response" {
                responses = [try ResponseTemplate(answers, context: context, scope: scope)]
            } else {
                let list = try answers.array()
                guard !list.isEmpty else { throw answers.error("expected at least one response") }
                var responses: [ResponseTemplate] = []
                for item in list { responses.append(try ResponseTemplate(item, context: context, scope: scope)) }
                self.responses = responses
            }
        }
        cycle = try object["cycle"]?.bool() ?? false
        latency = try object["latency"].map { (node) throws(RoutesError) in try Latency(node) }
    }

    /// Reads the `websocket` of a route, which then has no `response(s)` and takes only GET (upgrades are).
    private static func script(
        _ node: DefinitionNode, of route: DefinitionObject, method: HTTP.Method?, scope: TemplateScope
    ) throws(RoutesError) -> WebSocketScript {
        let conflicting = ["response", "responses"].filter(route.has)
        guard conflicting.isEmpty else {
            throw node.error(
                "a route answers with \(conflicting.joined(separator: " and ")) or with a websocket script, not both")
        }
        if let method, method != .get {
            throw route["method"]!.error(
                "a WebSocket upgrade is a GET request: a websocket route takes method GET, ANY or none")
        }
        return try WebSocketScript(node, scope: scope)
    }

    /// The parameters the route captures from the request, when its method, host and path fit.
    func match(method requestMethod: HTTP.Method, host: String?, path: String) -> RouteParameters? {
        if let method, method != requestMethod, !(method == .get && requestMethod == .head) { return nil }
        var relative = path
        if let base {
            guard let inside = base.relativePath(host: host, path: path) else { return nil }
            relative = inside
        }
        return pattern.match(path: relative)
    }

    /// 400 for a request whose value `condition`'s pattern could not judge within its step budget: neither
    /// a match nor a miss can be said, and passing the request on without a word would hide why.
    private func overBudget(_ condition: RequestCondition) -> StubAnswer {
        let message =
            "the route's when.\(condition.place) pattern could not judge the request's value within \(ValueMatcher.stepBudget) steps; use a simpler pattern or a shorter value"
        let body: JSONValue = ["error": .string(message), "route": .string(id)]
        return StubAnswer(
            route: id,
            response: HTTP.Response(
                status: 400, headers: ["Content-Type": "application/json"], body: JSONWriter().write(body)),
            fault: nil, delay: .zero, problem: message)
    }

    /// The answer, when every condition holds (nil passes the request on).
    func answer(_ context: TemplateContext) -> StubAnswer? {
        // A websocket route answers upgrades only: a plain request to its path goes on to the next layer
        // (the cassette, the upstream), so the same path can serve both.
        if webSocket != nil && !context.request.isWebSocketUpgrade { return nil }
        for condition in conditions {
            switch condition.holds(for: context) {
            case true?: continue
            case false?: return nil
            case nil: return overBudget(condition)
            }
        }
        let delay = latency?.sample() ?? .zero
        if let fault, fault.strikes() {
            switch fault {
            case .connection(let kind, _):
                return StubAnswer(route: id, response: nil, fault: kind, delay: delay)
            case .status(let status, _):
                let body: JSONValue = ["error": "fault injected by the route", "route": .string(id)]
                return StubAnswer(
                    route: id,
                    response: HTTP.Response(
                        status: status, headers: ["Content-Type": "application/json"], body: JSONWriter().write(body)),
                    fault: nil, delay: delay)
            }
        }
        if let webSocket {
            let script = WebSocketScriptAnswer(
                route: id, script: webSocket, request: context.request, parameters: context.parameters)
            return StubAnswer(route: id, response: nil, fault: nil, delay: delay, webSocket: script)
        }
        guard !responses.isEmpty else { return nil }
        var index = 0
        if responses.count > 1 {
            let call = calls.wrappingAdd(1, ordering: .relaxed).oldValue
            index = cycle ? call % responses.count : min(call, responses.count - 1)
        }
        do {
            return StubAnswer(route: id, response: try responses[index].render(context), fault: nil, delay: delay)
        } catch {
            let body: JSONValue = ["error": .string(error.message), "route": .string(id)]
            return StubAnswer(
                route: id,
                response: HTTP.Response(
                    status: 500, headers: ["Content-Type": "application/json"], body: JSONWriter().write(body)),
                fault: nil, delay: delay, problem: error.message)
        }
    }

    /// Whether the route is specific to a host or a prefix (it then goes before routes for any host).
    var baseSpecificity: Int { base?.specificity ?? 0 }
}

/// What a route does with one request: an answer (after `delay`), a broken connection, or for a WebSocket
/// upgrade a scripted conversation.
public struct StubAnswer: Sendable {
    /// The id of the route that answered.
    public let route: String
    /// The response; nil when the connection fails instead.
    public let response: HTTP.Response?
    public let fault: Fault.Kind?
    /// How long to wait before answering or failing.
    public let delay: Duration
    /// What went wrong when the route answers 500 because it could not render its response (a header
    /// value fed CR or LF by the request), for the server to log; nil otherwise.
    public let problem: String?
    /// The route's script for an upgrade request it takes (`response` and `fault` are then nil); `delay`
    /// holds the handshake back.
    package let webSocket: WebSocketScriptAnswer?

    init(
        route: String, response: HTTP.Response?, fault: Fault.Kind?, delay: Duration, problem: String? = nil,
        webSocket: WebSocketScriptAnswer? = nil
    ) {
        self.route = route
        self.response = response
        self.fault = fault
        self.delay = delay
        self.problem = problem
        self.webSocket = webSocket
    }
}
