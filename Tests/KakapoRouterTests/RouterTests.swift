import KakapoHTTP
import KakapoJSON
import KakapoRouter
import KakapoTestSupport
import Testing

@Suite("Router")
struct RouterTests {
    static func request(_ target: String, host: String? = nil) -> HTTP.Request {
        request(.get, target, host: host)
    }

    static func request(_ method: HTTP.Method, _ target: String, host: String? = nil, body: String = "")
        -> HTTP.Request
    {
        var headers = HTTP.Headers()
        if let host { headers.add(name: "Host", value: host) }
        return HTTP.Request(method: method, target: target, headers: headers, body: Array(body.utf8))
    }

    /// A registry whose handlers answer with the pattern they were registered for.
    static func registry(_ patterns: [String], method: HTTP.Method = .get) -> RouterRegistry {
        let registry = RouterRegistry()
        for pattern in patterns {
            registry.router.on(pattern, method: method) { _ in pattern }
        }
        return registry
    }

    static func answer(_ registry: RouterRegistry, _ request: HTTP.Request) async -> String? {
        guard let match = registry.match(request) else { return nil }
        let response = await match.respond(to: request)
        return String(decoding: response.body, as: UTF8.self)
    }

    @Test("parameters are captured by name; a different constant does not match")
    func parameters() throws {
        let registry = Self.registry(["/users/:user_id/comments/:comment_id"])
        let match = try #require(registry.match(Self.request("/users/1/comments/2")))
        #expect(match.parameters["user_id"] == "1")
        #expect(try match.parameters.require("comment_id") == "2")
        #expect(throws: RouterError.self) { try match.parameters.require("post_id") }
        #expect(registry.match(Self.request("/users/1/whatever/2")) == nil)
    }

    @Test("/users/:id does not match /users/ or /users; slashes and queries do not matter")
    func emptySegments() {
        let registry = Self.registry(["/users/:id"])
        #expect(registry.match(Self.request("/users/")) == nil)
        #expect(registry.match(Self.request("/users")) == nil)
        #expect(registry.match(Self.request("//users//7/?x=1"))?.parameters["id"] == "7")
        let trailing = Self.registry(["users/:id/"])
        #expect(trailing.match(Self.request("/users/7"))?.parameters["id"] == "7")
    }

    @Test("a constant beats a parameter beats * beats **, whatever the registration order")
    func precedence() async {
        for patterns in [
            ["/files/**", "/files/*", "/files/:name", "/files/me"],
            ["/files/me", "/files/:name", "/files/*", "/files/**"],
        ] {
            let registry = Self.registry(patterns)
            #expect(await Self.answer(registry, Self.request("/files/me")) == #""/files/me""#)
            #expect(await Self.answer(registry, Self.request("/files/other")) == #""/files/:name""#)
            #expect(await Self.answer(registry, Self.request("/files/a/b/c")) == #""/files/**""#)
        }
    }

    @Test("lookup backtracks: a constant branch that dead-ends falls back to the parameter branch")
    func backtracking() {
        let registry = Self.registry(["/users/me/settings", "/users/:id/posts"])
        #expect(registry.match(Self.request("/users/me/posts"))?.parameters["id"] == "me")
    }

    @Test("** captures the rest of the path, percent-decoded; parameters are percent-decoded")
    func catchAllAndDecoding() {
        let registry = Self.registry(["/static/**", "/tags/:tag"])
        #expect(
            registry.match(Self.request("/static/css/site%20main.css"))?.parameters.catchAll == [
                "css", "site main.css",
            ])
        #expect(registry.match(Self.request("/tags/swift%2Fnio"))?.parameters["tag"] == "swift/nio")
        #expect(registry.match(Self.request("/tags/a+b"))?.parameters["tag"] == "a+b")
    }

    @Test("methods are told apart; HEAD falls back to GET; any matches every method")
    func methods() async {
        let registry = RouterRegistry()
        registry.router.get("/a") { _ in "get" }
        registry.router.post("/a") { _ in "post" }
        registry.router.any("/b") { request in request.method.rawValue }
        #expect(await Self.answer(registry, Self.request(.post, "/a")) == #""post""#)
        #expect(await Self.answer(registry, Self.request(.head, "/a")) == #""get""#)
        #expect(registry.match(Self.request(.delete, "/a")) == nil)
        #expect(await Self.answer(registry, Self.request(.patch, "/b")) == #""PATCH""#)
    }

    @Test("routers scoped by base URL: the most specific one answers")
    func scopedRouters() async throws {
        let registry = RouterRegistry()
        for base in ["http://www.test.com", "http://www.test.com/v1", "http://www.test.com/v1/foo/bar"] {
            try registry.register(base).get("/users/:id") { _ in base }
        }
        let deepest = Self.request("/v1/foo/bar/users/1", host: "www.test.com")
        #expect(await Self.answer(registry, deepest) == #""http://www.test.com/v1/foo/bar""#)
        #expect(
            await Self.answer(registry, Self.request("/v1/users/1", host: "www.test.com"))
                == #""http://www.test.com/v1""#)
        #expect(
            await Self.answer(registry, Self.request("/users/1", host: "www.test.com")) == #""http://www.test.com""#)
        #expect(registry.match(Self.request("/users/1", host: "other.com")) == nil)
        // An absolute-form target (a client using Kakapo as its HTTP proxy) carries the host itself.
        #expect(
            await Self.answer(registry, Self.request("http://www.test.com/v1/users/9")) == #""http://www.test.com/v1""#)
        #expect(try registry.register("http://www.test.com/v1") === registry.register("http://www.test.com/v1/"))
    }

    @Test(
        "invalid and conflicting patterns are rejected, naming the pattern",
        arguments: [
            (["/files/**/x"], "\"/files/**/x\": '**' must be the last segment"),
            (["/users/:"], "\"/users/:\": a parameter needs a name"),
            (["/a/:id/b/:id"], "parameter ':id' appears twice"),
            (["/users/:id", "/users/:name"], "route GET \"/users/:name\" conflicts with \"/users/:id\""),
            (["/x", "x/"], "route GET \"x/\" conflicts with \"/x\""),
        ])
    func invalidPatterns(patterns: [String], message: String) {
        let registry = Self.registry(patterns)
        do {
            try registry.validate()
            Issue.record("accepted \(patterns)")
        } catch {
            #expect(error.message.contains(message), "\(error)")
        }
    }

    @Test("the handler's request gives decoded query items, text and JSON")
    func handlerRequest() async throws {
        let registry = RouterRegistry()
        registry.router.post("/echo/:id") { request in
            [
                "id": request.parameters["id"] ?? "", "q": request.query("q") ?? "",
                "name": try request.json()["name"]?.stringValue ?? "",
            ]
        }
        let response = try await #require(
            registry.match(Self.request(.post, "/echo/5?q=a+b%21", body: #"{"name":"Ada"}"#))
        )
        .respond(to: Self.request(.post, "/echo/5?q=a+b%21", body: #"{"name":"Ada"}"#))
        #expect(response.status == 200)
        #expect(response.headers["Content-Type"] == "application/json")
        #expect(String(decoding: response.body, as: UTF8.self) == #"{"id":"5","name":"Ada","q":"a b!"}"#)
    }

    @Test("Response sets status and headers; nil answers 200 with an empty body; errors render as JSON")
    func responses() async throws {
        let registry = RouterRegistry()
        registry.router.get("/created") { _ in Response(statusCode: 201, body: ["ok": true], headerFields: ["X-A": "1"])
        }
        registry.router.get("/nothing") { _ in nil }
        registry.router.get("/teapot") { _ in throw HTTPError(status: 418, message: "short and stout") }
        registry.router.get("/bad-json") { request in try request.json() }
        let created = await registry.match(Self.request("/created"))!.respond(to: Self.request("/created"))
        #expect(
            created.status == 201 && created.headers["X-A"] == "1"
                && created.headers["Content-Type"] == "application/json")
        let nothing = await registry.match(Self.request("/nothing"))!.respond(to: Self.request("/nothing"))
        #expect(nothing.status == 200 && nothing.body.isEmpty)
        let teapot = await registry.match(Self.request("/teapot"))!.respond(to: Self.request("/teapot"))
        #expect(teapot.status == 418)
        #expect(try JSONParser.parse(teapot.body)["error"] == "short and stout")
        let bad = await registry.match(Self.request("/bad-json"))!.respond(
            to: Self.request(.get, "/bad-json", body: "{"))
        #expect(bad.status == 400)
    }

    @Test("latency delays the answer")
    func latency() async {
        let registry = Self.registry(["/slow"])
        registry.router.latency = .milliseconds(200)
        let started = ContinuousClock.now
        _ = await Self.answer(registry, Self.request("/slow"))
        #expect(ContinuousClock.now - started >= .milliseconds(200))
    }
}

@Suite("Router under random routes")
struct RouterFuzzTests {
    @Test("random route sets and paths never crash, and an exact constant route always wins")
    func randomRoutes() async throws {
        var random = SeededRandom(seed: 7)
        let segments = ["a", "b", "c", ":x", ":y", "*"]
        for _ in 0..<200 {
            let registry = RouterRegistry()
            var constants: Set<String> = []
            var registered: Set<String> = []
            for _ in 0..<Int.random(in: 1...12, using: &random) {
                var parts = (0..<Int.random(in: 0...4, using: &random)).map { _ in
                    segments.randomElement(using: &random)!
                }
                if Bool.random(using: &random) && Int.random(in: 0..<4, using: &random) == 0 { parts.append("**") }
                let pattern = "/" + parts.joined(separator: "/")
                let parameters = parts.filter { $0.hasPrefix(":") }
                guard Set(parameters).count == parameters.count else { continue }  // invalid: tested elsewhere
                let shape = parts.map { $0.hasPrefix(":") ? ":" : $0 }.joined(separator: "/")
                guard registered.insert(shape).inserted else { continue }
                if parts.allSatisfy({ !$0.hasPrefix(":") && $0 != "*" && $0 != "**" }) { constants.insert(pattern) }
                registry.router.get(pattern) { _ in pattern }
            }
            try registry.validate()
            for _ in 0..<30 {
                let path =
                    "/"
                    + (0..<Int.random(in: 0...5, using: &random)).map { _ in
                        ["a", "b", "c", "d"].randomElement(using: &random)!
                    }.joined(separator: "/")
                let match = registry.match(HTTP.Request(method: .get, target: path))
                if constants.contains(path) {
                    #expect(match?.pattern.text == path, "\(path) must reach its constant route")
                }
            }
        }
    }
}
