import Dispatch
import KakapoHTTP
import KakapoJSON
import KakapoResources
import KakapoRouter
import KakapoStubs

/// `/__kakapo/*`: health, the request journal, and the attached stores (dump and reset). Answers only
/// clients on loopback, or, when an admin token is configured, only requests that carry it; never requests
/// that came through the forward proxy, and, without the token, nothing a web page could have sent
/// (`browserRefusal`).
package enum AdminEndpoints {
    package static let prefix = "/__kakapo/"
    static let routesPrefix = "/__kakapo/routes/"

    private static func answer(_ response: HTTP.Response) -> Answer {
        Answer(response: response, source: .admin)
    }

    /// `{"routes": [{"id", "origin", "route"}], "resources": [...]}`, in the order routes are tried.
    static func routeList(_ pipeline: RequestPipeline) -> JSONValue {
        let routes = pipeline.stubs.routes.map { stub, origin -> JSONValue in
            ["id": .string(stub.id), "origin": .string(origin.rawValue), "route": stub.definition]
        }
        return ["routes": .array(routes), "resources": .array(pipeline.resources.collectionDefinitions)]
    }

    /// `POST /__kakapo/routes` with one route object: 201 `{"id": ...}`, 400 naming what is wrong, 409
    /// when the id is taken.
    static func addRoute(_ request: HTTP.Request, pipeline: RequestPipeline) -> HTTP.Response {
        let value: JSONValue
        do {
            value = try JSONParser.parse(request.body)
        } catch {
            return .error("the body is not JSON: \(error)", status: 400)
        }
        if case .string(let id)? = value["id"], pipeline.stubs.routes.contains(where: { $0.0.id == id }) {
            return .error("a route with the id \"\(id)\" exists already", status: 409)
        }
        let directory = pipeline.runtimeDirectory.withLock { $0 }
        do {
            let stub = try pipeline.stubs.addRuntimeRoute(
                value, context: DefinitionContext(baseDirectory: directory, idPrefix: "runtime", confined: true))
            var response = HTTP.Response.json(["id": .string(stub.id)], status: 201)
            response.headers.add(name: "Location", value: routesPrefix + stub.id.percentEncodedForQuery())
            return response
        } catch {
            return .error(error.description, status: 400)
        }
    }

    /// `POST /__kakapo/requests/count` with `{"method": "GET", "path": "/users/:id"}`: `{"count": N}`.
    static func countRequests(_ request: HTTP.Request, pipeline: RequestPipeline) -> HTTP.Response {
        guard let body = try? JSONParser.parse(request.body), case .object(let query) = body,
            case .string(let path)? = query["path"]
        else {
            return .json(
                ["error": "expected {\"method\": \"GET\", \"path\": \"/users/:id\"} (method optional)"], status: 400)
        }
        var method: String?
        switch query["method"] {
        case .string(let name)?: method = name.uppercased() == "ANY" ? nil : name.uppercased()
        case nil, .null?: method = nil
        default: return .error("method must be a string such as \"GET\"", status: 400)
        }
        let pattern: RoutePattern
        do {
            pattern = try RoutePattern(path)
        } catch {
            return .error(error.message, status: 400)
        }
        let (count, complete) = pipeline.journal.count(method: method, pattern: pattern)
        var result: JSONObject = ["count": .number(JSONNumber(count))]
        if !complete { result["complete"] = false }
        return .json(.object(result), status: 200)
    }

    /// The refusal for a request that may not use the admin endpoints; nil when it may.
    static func refusal(_ request: HTTP.Request, fromLoopback: Bool, pipeline: RequestPipeline) -> Answer? {
        if let token = pipeline.configuration.adminToken {
            guard ConstantTime.isBearer(request.headers["Authorization"], token: token) else {
                return Answer(
                    response: .json(
                        ["error": "the admin endpoints need Authorization: Bearer <admin token>"], status: 401),
                    source: .admin)
            }
        } else if !fromLoopback {
            return Answer(
                response: .error("the admin endpoints answer only on loopback", status: 403), source: .admin)
        }
        return nil
    }

    /// The refusal (403) for an admin request a web page could have made, checked for requests that came
    /// through a socket; nil when it may go on. A page in a browser can send simple requests (a `text/plain`
    /// or form POST) to loopback without asking first (CSRF), and a host name it controls can be pointed at
    /// 127.0.0.1 (DNS rebinding). And the proxy port serves the app's own pages (replayed and recorded
    /// answers, which a committed cassette or a hostile upstream may fill with script), so a page there is
    /// same-origin with the proxy port's admin endpoints. So, unless the request carries the configured
    /// admin token (which a page cannot add without asking):
    /// - its `Host` must be a loopback name or the listening address;
    /// - on the proxy port (`onAdminListener` false), no admin endpoint but health answers a request a page
    ///   sent (`pageMark`), whatever its origin; the inspector's files redirect to the admin listener;
    /// - on the admin listener, a request from another origin or site is refused (the page's own files
    ///   excepted, so a redirect or a link can open the inspector), and a change must send JSON (a DELETE
    ///   without a body needs none) from no page or the admin listener's own.
    package static func browserRefusal(
        _ request: HTTP.Request, listening: ListeningAddress, onAdminListener: Bool = false,
        pipeline: RequestPipeline
    ) -> Answer? {
        if let token = pipeline.configuration.adminToken,
            ConstantTime.isBearer(request.headers["Authorization"], token: token)
        {
            return nil
        }
        let why: String
        if let host = request.headers["Host"], !listening.acceptsHostHeader(host) {
            why = "Host \"\(host)\" is not a loopback name or the listening address (DNS rebinding?)"
        } else if !onAdminListener,
            let redirect = InspectorEndpoints.redirectToAdminListener(request, pipeline: pipeline)
        {
            return redirect
        } else if !onAdminListener, request.path != healthPath,
            let mark = pageMark(request) ?? wildcardHost(request)
        {
            let elsewhere =
                pipeline.listeners.withLock { $0.admin }.map {
                    "; pages use the admin listener on port \($0) (the inspector is at http://127.0.0.1:\($0)\(InspectorEndpoints.uiPath))"
                } ?? ""
            why =
                "the proxy port serves the app's pages, so its admin endpoints do not answer a web page's request (\(mark))\(elsewhere)"
        } else if onAdminListener, !InspectorEndpoints.isPageFile(request),
            let foreign = foreignSite(request, listening)
        {
            why = foreign
        } else if let refused = mutationRefusal(request, listening: listening) {
            why = refused
        } else {
            return nil
        }
        pipeline.logger.warning("refused \(request.method) \(request.path): \(why)")
        return answer(
            .json(
                [
                    "error": .string(
                        "the admin endpoints refused this request: \(why); send the admin token (--admin-token) to be let through"
                    )
                ], status: 403))
    }

    static let healthPath = "/__kakapo/health"

    /// The admin listener's 404 for a request that is not for `/__kakapo/*`: it serves no app content.
    package static func notAdmin(_ request: HTTP.Request, pipeline: RequestPipeline) -> Answer {
        let proxy = pipeline.listeners.withLock { $0.proxy }.map { " (the proxy listens on port \($0))" } ?? ""
        return answer(
            .error(
                "this is Kakapo's admin listener: it answers /__kakapo/* only; send the app's requests to the proxy port\(proxy)",
                status: 404))
    }

    /// What shows that a web page sent `request`, or nil: an `Origin` (every browser sends one with a
    /// request that changes something, and with any cross-origin one), or a `Sec-Fetch-Site` other than
    /// `none` (sent with every request a page makes to a loopback address; `none` is the user typing the
    /// URL). Command-line clients and SDKs send neither (Node's fetch sends `Sec-Fetch-Mode` only).
    static func pageMark(_ request: HTTP.Request) -> String? {
        if let origin = request.headers["Origin"] { return "Origin: \(origin.prefix(100))" }
        if let site = request.headers["Sec-Fetch-Site"], site.lowercased() != "none" {
            return "Sec-Fetch-Site: \(site.prefix(40))"
        }
        return nil
    }

    /// `Host: 0.0.0.0` (or `[::]`): what a browser sends for a page it opened at the wildcard address, an
    /// origin no browser treats as trustworthy, so it sends no `Sec-Fetch-Site` for the page's own reads.
    /// Tools use a loopback name or address.
    static func wildcardHost(_ request: HTTP.Request) -> String? {
        guard let host = request.headers["Host"], let (name, _) = RequestOrigin.splitAuthority(host) else { return nil }
        // (`splitAuthority` gives an IPv6 literal without its brackets.)
        let bare = name.lowercased()
        return bare == "0.0.0.0" || bare == "::" ? "Host: \(host.prefix(60)), a wildcard address" : nil
    }

    /// Why a request to the admin listener came from another origin or site (a page served by the proxy
    /// port is same-site with it), or nil.
    private static func foreignSite(_ request: HTTP.Request, _ listening: ListeningAddress) -> String? {
        if let origin = request.headers["Origin"], !listening.isOwnOrigin(origin) {
            return "Origin \"\(origin.prefix(100))\" is not the admin listener's own (a web page's request?)"
        }
        if let site = request.headers["Sec-Fetch-Site"]?.lowercased(), site == "cross-site" || site == "same-site" {
            return "Sec-Fetch-Site: \(site) (a request from another page)"
        }
        return nil
    }

    /// Why a request that changes something may not have come from Kakapo's own tools: a body that is not
    /// JSON, or a foreign `Origin`. Nil for reads and for requests that pass.
    private static func mutationRefusal(_ request: HTTP.Request, listening: ListeningAddress) -> String? {
        guard request.method != .get, request.method != .head, request.method != .options else { return nil }
        if let origin = request.headers["Origin"], !listening.isOwnOrigin(origin) {
            return "Origin \"\(origin)\" is not Kakapo's own (a web page's request?)"
        }
        if request.method == .delete && request.body.isEmpty { return nil }
        let type = String((request.headers["Content-Type"] ?? "").prefix { $0 != ";" }).lowercased().filter {
            $0 != " " && $0 != "\t"
        }
        guard type == "application/json" || (type.hasPrefix("application/") && type.hasSuffix("+json"))
        else {
            return "a \(request.method) needs a JSON body (Content-Type: application/json)"
        }
        return nil
    }

    static let sessionsPath = "/__kakapo/sessions"

    /// `/__kakapo/sessions` (open, list) and `/__kakapo/sessions/{id}` (end) when sessions are enabled: they
    /// read and write files, so they are answered later, one at a time, on the sessions' queue. Nil for every
    /// other request, and for requests the admin rules refuse (`answer` refuses them).
    static func sessionAnswer(_ request: HTTP.Request, fromLoopback: Bool, pipeline: RequestPipeline)
        -> (queue: DispatchQueue, answer: @Sendable () -> Answer)?
    {
        let path = request.path
        guard path == sessionsPath || path.hasPrefix(sessionsPath + "/") else { return nil }
        guard let sessions = pipeline.sessions else {
            return (
                .global(),
                {
                    answer(
                        .json(
                            [
                                "error":
                                    "sessions are not enabled: start kakapo with --cassette-dir DIR (cassette paths are relative to it)"
                            ], status: 404))
                }
            )
        }
        guard refusal(request, fromLoopback: fromLoopback, pipeline: pipeline) == nil else { return nil }
        let method = request.method
        let body = request.body
        if path == sessionsPath {
            switch method {
            case .post:
                return (sessions.queue, { answer(sessions.open(body, ownStore: { pipeline.freshFileResources() })) })
            case .get: return (sessions.queue, { answer(.json(["sessions": sessions.listing], status: 200)) })
            default: return nil
            }
        }
        let id = String(path.dropFirst(sessionsPath.count + 1)).removingPercentEncodingLeniently(plusAsSpace: false)
        guard method == .delete, !id.isEmpty else { return nil }
        // Not on the sessions' queue: ending waits for the session's answers and streams (up to the grace
        // period), which must not hold every other session's opening and ending meanwhile.
        return (DispatchQueue.global(), { answer(sessions.close(id)) })
    }

    /// `GET` and `DELETE /__kakapo/store` when a shared store is configured: they wait for the database,
    /// so they are answered later. Nil for every other request.
    static func sharedStoreAnswer(_ request: HTTP.Request, fromLoopback: Bool, pipeline: RequestPipeline)
        -> (@Sendable () async -> Answer)?
    {
        guard let shared = pipeline.resources.shared, request.path == "/__kakapo/store",
            request.method == .get || request.method == .delete,
            refusal(request, fromLoopback: fromLoopback, pipeline: pipeline) == nil
        else { return nil }
        let resources = pipeline.resources
        let method = request.method
        return {
            do {
                if method == .delete {
                    let reset = resources.resetInMemory()
                    try await resources.resetShared(shared)
                    return answer(.json(["reset": .number(JSONNumber(reset + 1))], status: 200))
                }
                let snapshot = try await SharedStoreCall.run(timeout: resources.sharedTimeout) {
                    try await shared.snapshot()
                }
                return answer(
                    .json(["stores": .array(resources.attached.map { $0.snapshot() } + [snapshot])], status: 200))
            } catch {
                return answer(SharedStoreCall.unavailable(error))
            }
        }
    }

    static func answer(_ request: HTTP.Request, fromLoopback: Bool, pipeline: RequestPipeline) -> Answer {
        if let refused = refusal(request, fromLoopback: fromLoopback, pipeline: pipeline) { return refused }
        if let answer = InspectorEndpoints.answer(request, pipeline: pipeline) { return answer }
        switch (request.method, request.path) {
        case (.get, healthPath):
            var body: JSONObject = [
                "status": "ok", "version": .string(KakapoVersion.current),
                "mode": .string(pipeline.configuration.mode.rawValue),
            ]
            if let session = pipeline.session {
                body["cassette"] = .string(session.path)
                body["interactions"] = .number(JSONNumber(session.interactionCount))
            }
            if let sessions = pipeline.sessions {
                body["sessions"] = [
                    "directory": .string(sessions.root), "open": .number(JSONNumber(sessions.openCount)),
                ]
            }
            // Where the app's requests go and where pages may use the admin API (the inspector builds its
            // curl commands for the proxy port from this).
            let ports = pipeline.listeners.withLock { $0 }
            var listeners = JSONObject()
            if let proxy = ports.proxy { listeners["proxy"] = .number(JSONNumber(proxy)) }
            if let admin = ports.admin { listeners["admin"] = .number(JSONNumber(admin)) }
            if !listeners.isEmpty { body["listeners"] = .object(listeners) }
            return Answer(response: .json(.object(body), status: 200), source: .admin)
        case (.get, "/__kakapo/requests"):
            return Answer(response: .json(pipeline.journal.json, status: 200), source: .admin)
        case (.get, "/__kakapo/store"):
            let stores = pipeline.resources.attached.map { $0.snapshot() }
            return Answer(response: .json(["stores": .array(stores)], status: 200), source: .admin)
        case (.delete, "/__kakapo/store"):
            let reset = pipeline.resources.resetInMemory()
            return answer(.json(["reset": .number(JSONNumber(reset))], status: 200))
        case (.get, "/__kakapo/routes"):
            return answer(.json(AdminEndpoints.routeList(pipeline), status: 200))
        case (.post, "/__kakapo/routes"):
            return answer(addRoute(request, pipeline: pipeline))
        case (.delete, "/__kakapo/routes"):
            let removed = pipeline.stubs.removeRuntimeRoutes()
            return answer(.json(["removed": .number(JSONNumber(removed))], status: 200))
        case (.delete, let path) where path.hasPrefix(routesPrefix) && path.count > routesPrefix.count:
            let id = String(path.dropFirst(routesPrefix.count)).removingPercentEncodingLeniently(plusAsSpace: false)
            if pipeline.stubs.removeRuntimeRoute(id) { return answer(HTTP.Response(status: 204)) }
            if pipeline.stubs.isFileRoute(id) {
                return answer(
                    .json(
                        ["error": .string("route \(id) comes from a routes file; edit the file to change it")],
                        status: 409))
            }
            return answer(.error("no runtime route with the id \(id)", status: 404))
        case (.post, "/__kakapo/requests/count"):
            return answer(countRequests(request, pipeline: pipeline))
        case (.delete, "/__kakapo/requests"):
            pipeline.journal.clear()
            pipeline.inspector.clear()
            return answer(.json(["cleared": true], status: 200))
        default:
            return Answer(
                response: .json(
                    [
                        "error": .string("no admin endpoint \(request.method) \(request.path)"),
                        "endpoints": .array(
                            ([
                                "GET /__kakapo/health", "GET /__kakapo/requests", "POST /__kakapo/requests/count",
                                "DELETE /__kakapo/requests", "GET /__kakapo/store", "DELETE /__kakapo/store",
                                "GET /__kakapo/routes", "POST /__kakapo/routes", "DELETE /__kakapo/routes",
                                "DELETE /__kakapo/routes/{id}", "GET /__kakapo/sessions", "POST /__kakapo/sessions",
                                "DELETE /__kakapo/sessions/{id}",
                            ] + InspectorEndpoints.listed).map { .string($0) }),
                    ], status: 404), source: .admin)
        }
    }
}
