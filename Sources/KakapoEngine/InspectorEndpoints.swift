import KakapoHTTP
import KakapoInspector
import KakapoJSON

/// The inspector's part of the admin API: the page's files (`/__kakapo/ui`), the event stream
/// (`/__kakapo/events`), a request's detail and "save to cassette" (`/__kakapo/requests/{id}[/save]`) and
/// the cassette view (`/__kakapo/cassette[/{n}]`).
enum InspectorEndpoints {
    static let uiPath = "/__kakapo/ui"
    static let eventsPath = "/__kakapo/events"
    static let requestsPrefix = "/__kakapo/requests/"
    static let cassettePath = "/__kakapo/cassette"

    /// The endpoints, for the admin API's 404.
    static let listed = [
        "GET /__kakapo/ui", "GET /__kakapo/events", "GET /__kakapo/requests/{id}", "POST /__kakapo/requests/{id}/save",
        "GET /__kakapo/cassette", "GET /__kakapo/cassette/{n}",
    ]

    /// What every file of the page is served with: nothing but the page's own files runs or loads, nothing
    /// frames it, and no URL leaves it in a Referer.
    static let pageHeaders: [(String, String)] = [
        (
            "Content-Security-Policy",
            "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
        ),
        ("X-Content-Type-Options", "nosniff"), ("Referrer-Policy", "no-referrer"), ("Cache-Control", "no-cache"),
    ]

    /// Whether `request` is for one of the page's files (`/__kakapo/ui`, `/__kakapo/ui/...`).
    static func isPageFile(_ request: HTTP.Request) -> Bool {
        request.path == uiPath || request.path.hasPrefix(uiPath + "/")
    }

    /// On the proxy port, a 307 to the same file on the admin listener for a request for the page's files;
    /// nil for any other request, or when there is no admin listener. The page's address keeps the host the
    /// request named (a loopback name: the `Host` rules were checked before).
    static func redirectToAdminListener(_ request: HTTP.Request, pipeline: RequestPipeline) -> Answer? {
        guard isPageFile(request), let port = pipeline.listeners.withLock({ $0.admin }) else { return nil }
        var host = "127.0.0.1"
        if let given = request.headers["Host"], let (name, _) = RequestOrigin.splitAuthority(given), !name.isEmpty {
            host = name.contains(":") && !name.hasPrefix("[") ? "[\(name)]" : name
        }
        var response = HTTP.Response(status: 307)
        response.headers.add(name: "Location", value: "http://\(host):\(port)\(request.target)")
        response.headers.add(name: "Cache-Control", value: "no-store")
        return Answer(response: response, source: .admin)
    }

    /// The answer for a file of the page, or nil for any other request. The files hold no data, so with an
    /// admin token they are served without it (a browser's navigation cannot send it; the page asks for
    /// it); without one, only on loopback, as the rest of the admin API. The `Host` rules were checked by
    /// the transport before (`AdminEndpoints.browserRefusal`).
    static func pageFile(_ request: HTTP.Request, fromLoopback: Bool, pipeline: RequestPipeline) -> Answer? {
        let path = request.path
        guard isPageFile(request) else { return nil }
        if pipeline.configuration.adminToken == nil,
            let refused = AdminEndpoints.refusal(request, fromLoopback: fromLoopback, pipeline: pipeline)
        {
            return refused
        }
        guard request.method == .get || request.method == .head else {
            return .error("the inspector's files are read with GET", status: 405, source: .admin)
        }
        let name = path == uiPath ? "" : String(path.dropFirst(uiPath.count + 1))
        guard let asset = InspectorAssets.named(name.isEmpty ? "index.html" : name) else {
            var response = HTTP.Response.error("the inspector has no file \(name.prefix(200))", status: 404)
            for (field, value) in pageHeaders { response.headers.replaceOrAdd(name: field, value: value) }
            return Answer(response: response, source: .admin)
        }
        var headers = HTTP.Headers([("Content-Type", asset.contentType)])
        for (field, value) in pageHeaders { headers.add(name: field, value: value) }
        let body = request.method == .head ? [] : asset.bytes
        if request.method == .head { headers.add(name: "Content-Length", value: String(asset.bytes.count)) }
        return Answer(response: HTTP.Response(status: 200, headers: headers, body: body), source: .admin)
    }

    /// The answer for an inspector endpoint other than the page's files (the admin rules already checked),
    /// or nil when `request` is for none of them.
    static func answer(_ request: HTTP.Request, pipeline: RequestPipeline) -> Answer? {
        let path = request.path
        if path == eventsPath {
            guard request.method == .get else { return nil }
            return events(request, pipeline: pipeline)
        }
        if path == cassettePath || path.hasPrefix(cassettePath + "/") {
            guard request.method == .get else { return nil }
            return Answer(response: cassette(request, pipeline: pipeline), source: .admin)
        }
        guard path.hasPrefix(requestsPrefix) else { return nil }
        let rest = path.dropFirst(requestsPrefix.count)
        if request.method == .get, let id = Self.number(rest) {
            return Answer(response: detail(id, pipeline: pipeline), source: .admin)
        }
        if request.method == .post, rest.hasSuffix("/save"), let id = Self.number(rest.dropLast("/save".count)) {
            return Answer(response: save(id, pipeline: pipeline), source: .admin)
        }
        return nil
    }

    /// `GET /__kakapo/events[?after=ID][&backlog=none]` (or `Last-Event-ID`): the live stream.
    static func events(_ request: HTTP.Request, pipeline: RequestPipeline) -> Answer {
        var after: Int?
        var backlog = true
        for item in request.decodedQueryItems {
            switch item.name {
            case "after":
                guard let value = item.value.flatMap({ Self.number($0[...]) }) else {
                    return .error("after must be an event id (a whole number from 0)", status: 400, source: .admin)
                }
                after = value
            case "backlog":
                guard item.value == "none" || item.value == "all" else {
                    return .error("backlog must be none or all", status: 400, source: .admin)
                }
                backlog = item.value != "none"
            default:
                continue
            }
        }
        if after == nil, let last = request.headers["Last-Event-ID"] {
            // A browser that reconnects sends the last id it had; one that is not ours means from the start.
            after = Self.number(last.trimmingCharacters(in: .whitespaces)[...])
        }
        guard let live = pipeline.inspectorEvents.open(after: after, backlog: backlog) else {
            var response = HTTP.Response.error(
                "\(InspectorEvents.readerLimit) readers follow the events already: close an inspector tab, or try again later",
                status: 503)
            response.headers.add(name: "Retry-After", value: "5")
            return Answer(response: response, source: .admin)
        }
        let headers = HTTP.Headers([
            ("Content-Type", "text/event-stream; charset=utf-8"), ("Cache-Control", "no-store"),
            ("X-Content-Type-Options", "nosniff"),
        ])
        return Answer(.response(status: 200, headers: headers, body: .live(live)), source: .admin)
    }

    /// `GET /__kakapo/requests/{id}`.
    static func detail(_ id: Int, pipeline: RequestPipeline) -> HTTP.Response {
        guard let record = pipeline.inspector.record(id), let json = InspectorDetail.json(record, pipeline: pipeline)
        else {
            return .error(
                "request \(id) is no longer held (the inspector keeps the detail of the last 1000 requests, 32 MiB of bodies in all)",
                status: 404)
        }
        return .json(json, status: 200)
    }

    /// A whole number from 0 up to a billion, from its decimal digits alone; nil for anything else.
    static func number(_ text: Substring) -> Int? {
        guard !text.isEmpty, text.utf8.count <= 10, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
            let value = Int(text), value <= 1_000_000_000_000
        else { return nil }
        return value
    }
}
