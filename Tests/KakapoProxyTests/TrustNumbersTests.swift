import Foundation
import Kakapo
import KakapoTestSupport
import Testing

/// Numbers, hosts and header values a client controls, through a real server: each gets a clear answer
/// and the server keeps serving.
@Suite("Trust: numbers from clients")
struct TrustNumbersTests {
    static func todos() async throws -> ProxyHarness {
        try await ProxyHarness.serving(
            routes: #"{"resources": [{"path": "/todos", "seed": "todos.json"}]}"#,
            files: ["todos.json": RouteResourceTests.todos])
    }

    @Test(
        "_page and _limit near Int.max answer 400 naming the parameter; the process keeps serving",
        arguments: [
            "_page=9223372036854775807&_limit=2", "_limit=9223372036854775807", "_page=2&_limit=9223372036854775807",
            "_page=9223372036854775807", "_page=1000000001&_limit=2",
        ])
    func hugePages(query: String) async throws {
        let harness = try await Self.todos()
        let answer = try await harness.client.send(.get, "/todos?" + query)
        #expect(answer.status == 400, "\(answer.text)")
        #expect(answer.text.contains("must be a whole number from"), "\(answer.text)")
        #expect(try await harness.client.send(.get, "/todos").status == 200)
        await harness.stop()
    }

    @Test("thousands of query parameters or sort fields answer 400 at once instead of costing per entity")
    func manyParameters() async throws {
        let harness = try await Self.todos()
        let started = ContinuousClock.now
        let parameters = (0..<8_000).map { "f\($0)=1" }.joined(separator: "&")
        let many = try await harness.client.send(.get, "/todos?" + parameters)
        #expect(many.status == 400)
        #expect(many.text.contains("at most 256 query parameters"), "\(many.text)")
        let sorts = try await harness.client.send(
            .get, "/todos?_sort=" + (0..<8_000).map { "f\($0)" }.joined(separator: ","))
        #expect(sorts.status == 400)
        #expect(sorts.text.contains("_sort takes at most 32 fields"), "\(sorts.text)")
        // Wall time over two awaits: under the full suite a busy cooperative pool alone has added 5 s.
        #expect(ContinuousClock.now - started < .seconds(15))
        #expect(try await harness.client.send(.get, "/todos?_sort=priority,id&done=false").status == 200)
        await harness.stop()
    }

    @Test("the largest page and limit accepted do not overflow: an empty page, 200")
    func largestPage() async throws {
        let harness = try await Self.todos()
        let answer = try await harness.client.send(.get, "/todos?_page=1000000000&_limit=1000000000")
        #expect(answer.status == 200)
        #expect(answer.text == "[]")
        #expect(answer.headers["X-Total-Count"] == "4")
        await harness.stop()
    }

    @Test("_gte, _lte and _sort order long numbers by their digits, not as doubles")
    func exactOrdering() async throws {
        let harness = try await ProxyHarness.serving(
            routes: #"{"resources": [{"path": "/big", "seed": "big.json"}]}"#,
            files: [
                "big.json": #"""
                [{"id": 1, "n": 12345678901234567890123456789}, {"id": 2, "n": 12345678901234567890123456788},
                 {"id": 3, "n": 7e999}, {"id": 4, "n": 1e400}]
                """#
            ])
        func ids(_ query: String) async throws -> [Int] {
            try RouteResourceTests.ids(try await harness.client.send(.get, "/big?" + query))
        }
        #expect(try await ids("n_gte=12345678901234567890123456789&n_lte=1e30") == [1])
        #expect(try await ids("n_lte=12345678901234567890123456788") == [2])
        #expect(try await ids("n_gte=2e999") == [3])
        #expect(try await ids("_sort=n") == [2, 1, 4, 3])
        await harness.stop()
    }

    @Test("a Host that is not host[:port] never reaches the Link header: the links are relative")
    func linkHost() async throws {
        let harness = try await Self.todos()
        for host in [#"evil.example>; rel="next", <http://attacker"#, "a b", "x,y", "[::1", "h:port"] {
            let connection = try RawConnection(port: harness.port)
            connection.send("GET /todos?_page=1&_limit=2 HTTP/1.1\r\nHost: \(host)\r\nConnection: close\r\n\r\n")
            let answer = connection.receive().text
            guard answer.hasPrefix("HTTP/1.1 200") else {
                // A server that refuses such a Host outright is fine too; it must not reflect it.
                #expect(answer.hasPrefix("HTTP/1.1 400"), "\(answer.prefix(200))")
                continue
            }
            let link = try #require(answer.split(separator: "\r\n").first { $0.lowercased().hasPrefix("link:") })
            #expect(link.contains("</todos?_page=1&_limit=2>; rel=\"first\""), "\(link)")
            #expect(!link.contains("http://"), "\(link)")
        }
        for host in ["api.example.com:8080", "127.0.0.1", "[::1]:80", "my_host.local"] {
            let connection = try RawConnection(port: harness.port)
            connection.send("GET /todos?_page=1&_limit=2 HTTP/1.1\r\nHost: \(host)\r\nConnection: close\r\n\r\n")
            let answer = connection.receive().text
            #expect(answer.contains("<http://\(host)/todos?_page=1&_limit=2>; rel=\"first\""), "\(answer)")
        }
        await harness.stop()
    }

    @Test("a header template fed CR/LF answers 500 with a JSON error instead of closing the connection")
    func headerInjection() async throws {
        let harness = try await ProxyHarness.serving(
            routes: #"""
                {"routes": [{"path": "/echo", "response": {"headers": {"X-Echo": "v={{query.x}}"}, "text": "ok"}},
                            {"method": "POST", "path": "/body", "response": {"headers": {"X-Name": "{{body.name}}"}}}]}
                """#)
        let fine = try await harness.client.send(.get, "/echo?x=plain")
        #expect(fine.status == 200 && fine.headers["X-Echo"] == "v=plain")
        for value in ["a%0D%0ASet-Cookie:%20evil=1", "a%0Ab", "a%0Db", "a%00b"] {
            let answer = try await harness.client.send(.get, "/echo?x=" + value)
            #expect(answer.status == 500, "\(value)")
            #expect(answer.headers["Set-Cookie"] == nil)
            let error = try JSONParser.parse(answer.body)
            #expect(error["error"]?.stringValue?.contains("X-Echo") == true, "\(answer.text)")
            #expect(error["route"] != nil)
        }
        let body = try await harness.send(.post, "/body", json: #"{"name": "x\r\nInjected: 1"}"#)
        #expect(body.status == 500)
        #expect(body.headers["Injected"] == nil)
        #expect(try await harness.client.send(.get, "/echo?x=again").status == 200)
        await harness.stop()
    }

    @Test(
        "a route template that repeats the request stops at its output bound: 500 copies of {{body.x}} over a 1 MB body, as text, JSON or a header, answer 500 naming the bound, and the route answers again"
    )
    func templateOutputBound() async throws {
        let copies = Array(repeating: "{{body.x}}", count: 500)
        let text = copies.joined()
        let json = "[" + copies.map { "\"\($0)\"" }.joined(separator: ",") + "]"
        let harness = try await ProxyHarness.serving(
            routes: #"""
                {"routes": [{"id": "text", "method": "POST", "path": "/text", "response": {"text": "\#(text)"}},
                            {"id": "json", "method": "POST", "path": "/json", "response": {"json": \#(json)}},
                            {"id": "header", "method": "POST", "path": "/header", "response": {"headers": {"X-Copies": "\#(text)"}}}]}
                """#)
        let large = #"{"x": "\#(String(repeating: "y", count: 1 << 20))"}"#
        for path in ["/text", "/json", "/header"] {
            let answer = try await harness.send(.post, path, json: large)
            #expect(answer.status == 500, "\(path)")
            #expect(answer.text.contains("would render to more than"), "\(path): \(answer.text.prefix(300))")
            #expect(answer.body.count < 4096, "\(path): \(answer.body.count) bytes")
        }
        // Within the bound, the same routes render in full.
        let small = try await harness.send(.post, "/text", json: #"{"x": "ab"}"#)
        #expect(small.status == 200 && small.text == String(repeating: "ab", count: 500))
        let smallJSON = try await harness.send(.post, "/json", json: #"{"x": "ab"}"#)
        #expect(smallJSON.status == 200 && smallJSON.body.count == 500 * 5 + 1, "\(smallJSON.text.prefix(100))")
        await harness.stop()
    }

    @Test("a routes file with CR or LF in a literal header value or a bad header name is refused at load")
    func headerLiterals() throws {
        let directory = try Fixtures.temporaryDirectory()
        let value = directory + "/value.json"
        try #"{"routes": [{"path": "/a", "response": {"headers": {"X-A": "a\r\nB: c"}}}]}"#.write(
            toFile: value, atomically: true, encoding: .utf8)
        #expect(throws: RoutesError.self) { try RoutesFile.load(value) }
        let name = directory + "/name.json"
        try #"{"routes": [{"path": "/a", "response": {"headers": {"X A:": "b"}}}]}"#.write(
            toFile: name, atomically: true, encoding: .utf8)
        #expect(throws: RoutesError.self) { try RoutesFile.load(name) }
    }

    @Test("replay compares JSON numbers by their digits: a long integer's neighbour misses, its other spellings hit")
    func exactNumbersInReplay() async throws {
        let cassette = try Fixtures.temporaryDirectory() + "/numbers.json"
        try CassetteFile.save(
            Cassette(interactions: [
                Interaction(
                    request: HTTP.Request(
                        method: .post, target: "/orders", headers: ["Content-Type": "application/json"],
                        body: Array(#"{"id": 12345678901234567890123456789, "amount": 7e999, "rate": 1.50}"#.utf8)),
                    response: HTTP.Response(status: 201, headers: [:], body: Array("created".utf8)),
                    recordedAt: "", durationMilliseconds: 0)
            ]), to: cassette)
        let harness = try await ProxyHarness.replaying(cassette)
        func send(_ json: String) async throws -> HTTP.Response {
            try await harness.client.send(
                .post, "/orders", headers: ["Content-Type": "application/json"], body: Array(json.utf8))
        }
        #expect(try await send(#"{"id": 12345678901234567890123456789, "amount": 7e999, "rate": 1.50}"#).status == 201)
        #expect(
            try await send(#"{"rate": 15e-1, "amount": 70e998, "id": 1.2345678901234567890123456789e28}"#).status == 201
        )
        #expect(try await send(#"{"id": 12345678901234567890123456788, "amount": 7e999, "rate": 1.5}"#).status == 404)
        #expect(try await send(#"{"id": 12345678901234567890123456789, "amount": 1e400, "rate": 1.5}"#).status == 404)
        await harness.stop()
    }
}
