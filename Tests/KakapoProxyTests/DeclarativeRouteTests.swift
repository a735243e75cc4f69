import Foundation
import Kakapo
import KakapoTestSupport
import Testing

/// Routes declared in a routes file, through real sockets: templates, conditions, answers in turn,
/// bodies, latency, faults, and their place in the pipeline.
@Suite("Declarative routes")
struct DeclarativeRouteTests {
    @Test("templates fill in path parameters, query, headers, body values, now and uuid")
    func templates() async throws {
        let harness = try await ProxyHarness.serving(
            routes: #"""
                {"routes": [
                  {"method": "GET", "path": "/users/:id/files/**", "response": {
                     "headers": {"X-User": "user-{{params.id}}", "X-Trace": "{{headers.x-trace}}"},
                     "json": {"id": "{{params.id}}", "file": "{{params.**}}", "q": "{{query.q}}",
                              "greeting": "hello {{query.name}}!", "missing": "{{query.none}}"}}},
                  {"method": "POST", "path": "/orders", "response": {"status": 201, "json": {
                     "count": "{{body.count}}", "express": "{{body.express}}", "first": "{{body.items.0}}",
                     "items": "{{body.items}}", "label": "n={{body.count}}", "at": "{{now}}", "id": "{{uuid}}"}}},
                  {"method": "PUT", "path": "/echo", "response": {"text": "{{body.name}} via {{headers.content-type}}"}}
                ]}
                """#)
        defer { Task { await harness.stop() } }
        let user = try await harness.client.send(
            .get, "/users/42/files/a/b%20c.txt?q=x%2By&name=Ada+L", headers: ["X-Trace": "t-1"])
        #expect(user.status == 200)
        #expect(user.source == "route")
        #expect(user.headers["X-User"] == "user-42")
        #expect(user.headers["X-Trace"] == "t-1")
        #expect(user.headers["Content-Type"] == "application/json")
        #expect(
            try JSONParser.parse(user.body)
                == ["id": "42", "file": "a/b c.txt", "q": "x+y", "greeting": "hello Ada L!", "missing": nil])

        let order = try await harness.send(
            .post, "/orders", json: #"{"count": 3, "express": true, "items": ["a", "b"]}"#)
        #expect(order.status == 201)
        let body = try JSONParser.parse(order.body)
        #expect(body["count"] == 3)
        #expect(body["express"] == true)
        #expect(body["first"] == "a")
        #expect(body["items"] == ["a", "b"])
        #expect(body["label"] == "n=3")
        let now = try #require(body["at"]?.stringValue)
        #expect(now.count == 24 && now.hasSuffix("Z") && now.hasPrefix("20"))
        #expect(UUID(uuidString: try #require(body["id"]?.stringValue)) != nil)
        let second = try JSONParser.parse(try await harness.send(.post, "/orders", json: "{}").body)
        #expect(second["id"] != body["id"])
        #expect(second["count"] == .null)

        let echo = try await harness.send(.put, "/echo", json: #"{"name": "Ada"}"#)
        #expect(echo.text == "Ada via application/json")
        #expect(echo.headers["Content-Type"] == "text/plain; charset=utf-8")
    }

    @Test("`when` picks among routes for the same path in file order; none holding passes the request on")
    func conditions() async throws {
        let harness = try await ProxyHarness.serving(
            routes: #"""
                {"routes": [
                  {"path": "/search", "when": {"query": {"q": "exact"}}, "response": {"text": "exact"}},
                  {"path": "/search", "when": {"query": {"q": {"matches": "ab+c"}}}, "response": {"text": "regex"}},
                  {"path": "/search", "when": {"query": {"debug": {"present": true}}}, "response": {"text": "debug"}},
                  {"path": "/search", "when": {"headers": {"x-api-version": "2"}}, "response": {"text": "v2"}},
                  {"path": "/search", "when": {"headers": {"Authorization": {"present": false}}}, "response": {"status": 401}},
                  {"method": "POST", "path": "/pay", "when": {"json": {"/amount": 100, "/card/type": {"matches": "visa|amex"}}},
                   "response": {"text": "approved"}},
                  {"method": "POST", "path": "/pay", "when": {"json": {"/card": {"present": false}}}, "response": {"status": 400}},
                  {"method": "POST", "path": "/pay", "response": {"status": 402}}
                ]}
                """#)
        defer { Task { await harness.stop() } }
        let auth: HTTP.Headers = ["Authorization": "Bearer x"]
        #expect(try await harness.client.send(.get, "/search?q=exact").text == "exact")
        #expect(try await harness.client.send(.get, "/search?q=abbbc").text == "regex")
        // The regular expression must match the whole value.
        #expect(try await harness.client.send(.get, "/search?q=xabcx", headers: auth).status == 404)
        #expect(try await harness.client.send(.get, "/search?debug").text == "debug")
        #expect(try await harness.client.send(.get, "/search", headers: ["X-API-Version": "2"]).text == "v2")
        #expect(try await harness.client.send(.get, "/search").status == 401)
        let passed = try await harness.client.send(.get, "/search?q=other", headers: auth)
        #expect(passed.status == 404)
        #expect(passed.source == "miss")

        #expect(
            try await harness.send(.post, "/pay", json: #"{"amount": 100.0, "card": {"type": "amex"}}"#).text
                == "approved")
        #expect(try await harness.send(.post, "/pay", json: #"{"amount": 100, "card": {"type": "jcb"}}"#).status == 402)
        #expect(try await harness.send(.post, "/pay", json: #"{"amount": 100}"#).status == 400)
        #expect(try await harness.send(.post, "/pay", json: "not json").status == 400)
    }

    @Test("routes answer before the Store, the cassette and the upstream; what they pass on reaches each in turn")
    func precedence() async throws {
        let upstream = try await TestUpstream.start { request in
            .response(HTTP.Response(status: 200, contentType: "text/plain", text: "upstream \(request.path)"))
        }
        defer { Task { await upstream.stop() } }
        let cassette = try Fixtures.temporaryDirectory() + "/api.json"
        let recorder = try await ProxyHarness.recording(upstream, cassette: cassette)
        _ = try await recorder.client.send(.get, "/users/1")
        _ = try await recorder.client.send(.get, "/todos/1")
        _ = try await recorder.client.send(.get, "/plain")
        await recorder.stop()

        let harness = try await ProxyHarness.serving(
            routes: #"""
                {"routes": [
                  {"method": "GET", "path": "/users/:id", "when": {"query": {"mock": "1"}}, "response": {"text": "route"}},
                  {"method": "GET", "path": "/todos/1", "response": {"text": "route beats store"}}
                ],
                 "resources": [{"path": "/todos", "seed": [{"id": 1, "title": "stored"}, {"id": 2, "title": "two"}]}]}
                """#,
            ProxyConfiguration(
                mode: .new, cassettePath: cassette, upstream: UpstreamConfiguration(baseURL: upstream.baseURL)))
        let route = try await harness.client.send(.get, "/users/1?mock=1")
        #expect(route.text == "route")
        #expect(route.source == "route")
        let recorded = try await harness.client.send(.get, "/users/1")
        #expect(recorded.text == "upstream /users/1")
        #expect(recorded.source == "cassette")
        #expect(try await harness.client.send(.get, "/todos/1").text == "route beats store")
        let stored = try await harness.client.send(.get, "/todos/2")
        #expect(stored.source == "store")
        #expect(try JSONParser.parse(stored.body)["title"] == "two")
        let forwarded = try await harness.client.send(.get, "/fresh")
        #expect(forwarded.source == "upstream")
        #expect(forwarded.text == "upstream /fresh")
        let summary = await harness.stop()
        #expect(summary.counts[.route] == 2)
        #expect(summary.counts[.store] == 1)
        #expect(summary.counts[.cassette] == 1)
        #expect(summary.counts[.upstream] == 1)
        #expect(summary.text.contains("(2 route, 1 store, 1 cassette, 1 upstream)"))
    }

    @Test("the most specific route wins whatever the file order; a host route only answers for its host")
    func specificity() async throws {
        let harness = try await ProxyHarness.serving(
            routes: #"""
                {"routes": [
                  {"path": "/files/**", "response": {"text": "catch-all"}},
                  {"path": "/users/:id", "response": {"text": "param"}},
                  {"path": "/users/me", "response": {"text": "constant"}},
                  {"method": "GET", "path": "/users/:id/x", "response": {"text": "get"}},
                  {"path": "/users/:id/x", "response": {"text": "any"}},
                  {"host": "http://api.test", "path": "/users/:id", "response": {"text": "api host"}}
                ]}
                """#)
        defer { Task { await harness.stop() } }
        #expect(try await harness.client.send(.get, "/users/me").text == "constant")
        #expect(try await harness.client.send(.get, "/users/7").text == "param")
        #expect(try await harness.client.send(.get, "/files/a/b").text == "catch-all")
        #expect(try await harness.client.send(.get, "/users/7/x").text == "get")
        #expect(try await harness.client.send(.delete, "/users/7/x").text == "any")
        for request in ["GET /users/7 HTTP/1.1\r\nHost: api.test", "GET http://api.test/users/7 HTTP/1.1\r\nHost: x"] {
            let connection = try RawConnection(port: harness.port)
            connection.send(request + "\r\nConnection: close\r\n\r\n")
            let reply = connection.receive { $0.hasSuffix("api host") }
            #expect(reply.text.hasSuffix("\r\n\r\napi host"), "\(reply.text)")
        }
    }

    @Test("`responses` answer in turn and the last repeats; with `cycle` they start over")
    func sequences() async throws {
        let harness = try await ProxyHarness.serving(
            routes: #"""
                {"routes": [
                  {"path": "/job", "responses": [{"status": 202, "text": "queued"}, {"text": "running"}, {"text": "done"}]},
                  {"path": "/light", "cycle": true, "responses": [{"text": "red"}, {"text": "green"}]}
                ]}
                """#)
        defer { Task { await harness.stop() } }
        var job: [String] = []
        for _ in 0..<5 { job.append(try await harness.client.send(.get, "/job").text) }
        #expect(job == ["queued", "running", "done", "done", "done"])
        var light: [String] = []
        for _ in 0..<5 { light.append(try await harness.client.send(.get, "/light").text) }
        #expect(light == ["red", "green", "red", "green", "red"])
    }

    @Test("bodies: JSON, text, base64 and a file, each with a fitting Content-Type unless one is given")
    func bodies() async throws {
        let harness = try await ProxyHarness.serving(
            routes: #"""
                {"routes": [
                  {"path": "/json", "response": {"json": [1, {"a": null}]}},
                  {"path": "/text", "response": {"text": "plain"}},
                  {"path": "/bin", "response": {"base64": "AAEC/w=="}},
                  {"path": "/page", "response": {"file": "page.html"}},
                  {"path": "/typed", "response": {"headers": {"content-type": "application/vnd.api+json", "Set-Cookie": ["a=1", "b=2"]}, "json": {}}},
                  {"path": "/none", "response": {"status": 204}}
                ]}
                """#, files: ["page.html": "<h1>hi</h1>"])
        defer { Task { await harness.stop() } }
        let json = try await harness.client.send(.get, "/json")
        #expect(json.text == #"[1,{"a":null}]"#)
        #expect(json.headers["Content-Type"] == "application/json")
        #expect(json.headers["Content-Length"] == "14")
        #expect(try await harness.client.send(.get, "/text").headers["Content-Type"] == "text/plain; charset=utf-8")
        let binary = try await harness.client.send(.get, "/bin")
        #expect(binary.body == [0, 1, 2, 255])
        #expect(binary.headers["Content-Type"] == "application/octet-stream")
        let page = try await harness.client.send(.get, "/page")
        #expect(page.text == "<h1>hi</h1>")
        #expect(page.headers["Content-Type"] == "text/html; charset=utf-8")
        let typed = try await harness.client.send(.get, "/typed")
        #expect(typed.headers.values(for: "Content-Type") == ["application/vnd.api+json"])
        #expect(typed.headers.values(for: "Set-Cookie") == ["a=1", "b=2"])
        let none = try await harness.client.send(.get, "/none")
        #expect(none.status == 204)
        #expect(none.body.isEmpty)
    }

    @Test("latency delays answers within its bounds and blocks no thread: 40 slow calls at once take one delay")
    func latency() async throws {
        let harness = try await ProxyHarness.serving(
            routes: #"""
                {"routes": [
                  {"path": "/fixed", "latency": "300ms", "response": {"text": "ok"}},
                  {"path": "/uniform", "latency": {"uniform": ["100ms", "200ms"]}, "response": {"text": "ok"}},
                  {"path": "/lognormal", "latency": {"lognormal": {"median": "50ms", "sigma": 0.2}}, "response": {"text": "ok"}}
                ]}
                """#, ProxyConfiguration(threads: 1))
        defer { Task { await harness.stop() } }
        let clock = ContinuousClock()
        // Upper bounds are loose: other suites (1 GiB transfers among them) share the 2 cores.
        let fixed = try await clock.measure { _ = try await harness.client.send(.get, "/fixed") }
        #expect(fixed >= .milliseconds(300) && fixed < .seconds(10), "\(fixed)")
        for _ in 0..<3 {
            let uniform = try await clock.measure { _ = try await harness.client.send(.get, "/uniform") }
            #expect(uniform >= .milliseconds(100) && uniform < .seconds(10), "\(uniform)")
        }
        let lognormal = try await clock.measure { _ = try await harness.client.send(.get, "/lognormal") }
        #expect(lognormal >= .milliseconds(15) && lognormal < .seconds(10), "\(lognormal)")
        // One event loop thread: if waiting blocked it, 40 calls would take at least 12 s.
        let client = harness.client
        let all = try await clock.measure {
            try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<40 { group.addTask { try await client.send(.get, "/fixed").status } }
                for try await status in group { #expect(status == 200) }
            }
        }
        #expect(all < .seconds(10), "40 concurrent 300 ms answers took \(all)")
    }

    @Test("a status fault answers that status for its share of calls")
    func statusFault() async throws {
        let harness = try await ProxyHarness.serving(
            routes: #"""
                {"routes": [
                  {"path": "/always", "fault": {"status": 503}, "response": {"text": "never"}},
                  {"path": "/often", "fault": {"status": 500, "rate": 0.5}, "response": {"text": "ok"}},
                  {"path": "/never", "fault": {"status": 500, "rate": 0}, "response": {"text": "ok"}}
                ]}
                """#)
        defer { Task { await harness.stop() } }
        let always = try await harness.client.send(.get, "/always")
        #expect(always.status == 503)
        #expect(try JSONParser.parse(always.body)["route"] == "routes.json#0")
        var failures = 0
        for _ in 0..<200 where try await harness.client.send(.get, "/often").status == 500 { failures += 1 }
        #expect((50...150).contains(failures), "\(failures) of 200 failed at rate 0.5")
        for _ in 0..<20 { #expect(try await harness.client.send(.get, "/never").status == 200) }
    }

    @Test("connection faults: a reset, an empty reply and bytes that are not HTTP, as curl reports them")
    func connectionFaults() async throws {
        let harness = try await ProxyHarness.serving(
            routes: #"""
                {"routes": [
                  {"path": "/reset", "fault": "connection-reset", "response": {"text": "never"}},
                  {"path": "/empty", "fault": {"type": "empty-response"}, "response": {"text": "never"}},
                  {"path": "/garbage", "fault": "malformed-response", "response": {"text": "never"}},
                  {"path": "/fine", "response": {"text": "fine"}}
                ]}
                """#)
        defer { Task { await harness.stop() } }
        let base = "http://127.0.0.1:\(harness.port)"
        // libcurl (the test client) sees each as a failed exchange, never as an answer.
        for path in ["/reset", "/empty", "/garbage"] {
            await #expect(throws: UpstreamError.self) { _ = try await harness.client.send(.get, path) }
        }
        if Curl.isAvailable {
            let reset = try await Curl.run([base + "/reset"])
            #expect(reset.status == 56, "\(reset.error)")
            #expect(reset.error.contains("Connection reset by peer"), "\(reset.error)")
            let empty = try await Curl.run([base + "/empty"])
            #expect(empty.status == 52, "\(empty.error)")
            #expect(empty.error.contains("Empty reply from server"), "\(empty.error)")
            let garbage = try await Curl.run([base + "/garbage"])
            #expect(garbage.status != 0, "\(garbage.error)")
            #expect(garbage.output.isEmpty)
        }
        // The server goes on serving other connections.
        #expect(try await harness.client.send(.get, "/fine").text == "fine")
        let journal = try JSONParser.parse(try await harness.client.send(.get, "/__kakapo/requests").body)
        let statuses = journal["requests"]?.arrayValue?.compactMap { $0["status"]?.numberValue?.intValue }
        #expect(statuses?.filter { $0 == 0 }.count ?? 0 >= 3)
    }
}
