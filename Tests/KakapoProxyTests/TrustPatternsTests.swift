import Foundation
import Kakapo
import KakapoTestSupport
import Testing

/// Regular expressions that come from clients (`field_like`) or are matched against request data
/// (`when.matches`) run in time linear in the text, so no pattern stalls the event loop.
@Suite("Trust: patterns from outside")
struct TrustPatternsTests {
    static let longA = String(repeating: "a", count: 5_000)

    @Test("_like=((a*)*)*b over long values answers at once, and /__kakapo/health stays responsive meanwhile")
    func catastrophicLike() async throws {
        let seed = "[" + (1...20).map { #"{"id": \#($0), "title": "\#(Self.longA)"}"# }.joined(separator: ",") + "]"
        let harness = try await ProxyHarness.serving(
            routes: #"{"resources": [{"path": "/todos", "seed": "todos.json"}]}"#, files: ["todos.json": seed])
        let started = ContinuousClock.now
        async let first = harness.client.send(.get, "/todos?title_like=((a*)*)*b")
        async let second = harness.client.send(.get, "/todos?title_like=(a%7Caa)*c")
        try await Task.sleep(for: .milliseconds(20))
        let healthStarted = ContinuousClock.now
        let health = try await harness.client.send(.get, "/__kakapo/health")
        let healthTime = ContinuousClock.now - healthStarted
        let (a, b) = (try await first, try await second)
        let elapsed = ContinuousClock.now - started
        #expect(health.status == 200)
        // Before the fix health waited 45 s; the bound leaves room for the full suite's busy pool (5 s seen).
        #expect(healthTime < .seconds(15), "health took \(healthTime)")
        #expect(a.status == 200 && a.text == "[]")
        #expect(b.status == 200 && b.text == "[]")
        #expect(elapsed < .seconds(20), "the pathological patterns took \(elapsed)")
        let hit = try await harness.client.send(.get, "/todos?title_like=^A%2B$&id=3")
        #expect(hit.text.contains(#""id":3"#), "any case, anchored: \(hit.text.prefix(80))")
        await harness.stop()
    }

    @Test("a _like whose linear work over the whole collection passes the request's budget answers 400, quickly")
    func costlyLike() async throws {
        let seed = "[" + (1...20).map { #"{"id": \#($0), "title": "\#(Self.longA)"}"# }.joined(separator: ",") + "]"
        let harness = try await ProxyHarness.serving(
            routes: #"{"resources": [{"path": "/todos", "seed": "todos.json"}]}"#, files: ["todos.json": seed])
        let started = ContinuousClock.now
        let answer = try await harness.client.send(.get, "/todos?title_like=(.*a)%7B300%7Db")
        #expect(answer.status == 400, "\(answer.text.prefix(100))")
        #expect(answer.text.contains("steps over this collection"), "\(answer.text)")
        // Unbounded, this pattern runs for hours; the bound leaves room for a loaded 2-core CI machine.
        #expect(ContinuousClock.now - started < .seconds(25), "took \(ContinuousClock.now - started)")
        #expect(try await harness.client.send(.get, "/__kakapo/health").status == 200)
        await harness.stop()
    }

    @Test("a backreference or lookaround in _like answers 400 saying so")
    func refusedLike() async throws {
        let harness = try await ProxyHarness.serving(
            routes: #"{"resources": [{"path": "/todos", "seed": "todos.json"}]}"#,
            files: ["todos.json": RouteResourceTests.todos])
        let backreference = try await harness.client.send(.get, "/todos?title_like=(a)%5C1")
        #expect(backreference.status == 400)
        #expect(backreference.text.contains("backreferences are not supported"), "\(backreference.text)")
        let lookahead = try await harness.client.send(.get, "/todos?title_like=(%3F=a)")
        #expect(lookahead.status == 400)
        #expect(lookahead.text.contains("lookahead"), "\(lookahead.text)")
        let long = try await harness.client.send(.get, "/todos?title_like=" + String(repeating: "a", count: 1_001))
        #expect(long.status == 400)
        let big = try await harness.client.send(.get, "/todos?title_like=(a%7B1000%7D)%7B1000%7D")
        #expect(big.status == 400)
        #expect(big.text.contains("too large"), "\(big.text)")
        await harness.stop()
    }

    @Test("a route's when.matches with a catastrophic pattern answers quickly under concurrent requests")
    func catastrophicWhenMatches() async throws {
        let harness = try await ProxyHarness.serving(
            routes: #"""
                {"routes": [{"path": "/search", "when": {"query": {"q": {"matches": "((a*)*)*b"}},
                                                         "headers": {"X-Tag": {"matches": "(x+x+)+y"}}},
                             "response": {"text": "matched"}},
                            {"path": "/search", "response": {"status": 404, "text": "no"}}]}
                """#)
        let started = ContinuousClock.now
        try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    try await harness.client.send(
                        .get, "/search?q=" + Self.longA,
                        headers: ["X-Tag": String(repeating: "x", count: Self.longA.count)]
                    ).status
                }
            }
            for try await status in group { #expect(status == 404) }
        }
        #expect(ContinuousClock.now - started < .seconds(10), "took \(ContinuousClock.now - started)")
        let matched = try await harness.client.send(.get, "/search?q=aaab", headers: ["X-Tag": "xxy"])
        #expect(matched.text == "matched")
        await harness.stop()
    }

    @Test(
        "a when.matches too costly for a large value stops at its step budget and answers 400 naming the route and the key, never a silent miss"
    )
    func costlyWhenMatches() async throws {
        let harness = try await ProxyHarness.serving(
            routes: #"""
                {"routes": [{"id": "notes", "method": "POST", "path": "/notes", "when": {"json": {"/text": {"matches": "(.*a){300}b"}}},
                             "response": {"text": "matched"}},
                            {"id": "search", "path": "/search", "when": {"headers": {"X-Query": {"matches": "(.*a){300}b"}}},
                             "response": {"text": "matched"}},
                            {"method": "POST", "path": "/notes", "response": {"status": 422, "text": "no"}},
                            {"path": "/search", "response": {"status": 404, "text": "no"}}]}
                """#)
        let started = ContinuousClock.now
        let answer = try await harness.send(
            .post, "/notes", json: #"{"text": "\#(String(repeating: "a", count: 200_000))b"}"#)
        #expect(answer.status == 400)
        #expect(answer.text.contains("when.json./text pattern could not judge"), "\(answer.text)")
        #expect(answer.text.contains(#""route":"notes""#), "\(answer.text)")
        #expect(ContinuousClock.now - started < .seconds(10), "took \(ContinuousClock.now - started)")
        // The variant: a header's value, which the old silent miss passed on to the next route (404).
        let header = try await harness.client.send(
            .get, "/search", headers: ["X-Query": String(repeating: "a", count: 7_000) + "b"])
        #expect(header.status == 400)
        #expect(header.text.contains("when.headers.X-Query pattern could not judge"), "\(header.text)")
        // Within the budget a value is judged either way, and a miss passes on as before.
        let small = try await harness.send(
            .post, "/notes", json: #"{"text": "\#(String(repeating: "a", count: 300))b"}"#)
        #expect(small.text == "matched")
        let miss = try await harness.send(.post, "/notes", json: #"{"text": "short"}"#)
        #expect(miss.status == 422)
        await harness.stop()
    }

    @Test("a routes file with a backreference or lookbehind in when.matches is refused at load, naming the key")
    func refusedWhenMatches() throws {
        let directory = try Fixtures.temporaryDirectory()
        for pattern in [#"(a)\\1"#, "(?<=a)b", "a*+"] {
            let path = directory + "/routes.json"
            try #"{"routes": [{"path": "/a", "when": {"query": {"q": {"matches": "\#(pattern)"}}}, "response": {}}]}"#
                .write(toFile: path, atomically: true, encoding: .utf8)
            let error = try #require(throws: RoutesError.self) { try RoutesFile.load(path) }
            #expect(error.description.contains("routes[0].when.query.q.matches: not a valid regular expression"))
            #expect(error.description.contains("not supported"), "\(error)")
        }
    }
}
