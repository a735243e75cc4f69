import Foundation
import Kakapo
import KakapoTestSupport
import NIOConcurrencyHelpers
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite("Modes, matching, misses and failures")
struct PipelineTests {
    /// An upstream that counts requests per path and answers with the count.
    static func countingUpstream() async throws -> TestUpstream {
        let counts = NIOLockedValueBox<[String: Int]>([:])
        return try await TestUpstream.start { request in
            let count = counts.withLockedValue { counts -> Int in
                counts[request.path, default: 0] += 1
                return counts[request.path]!
            }
            return .response(HTTP.Response(status: 200, contentType: "text/plain", text: "\(request.path) #\(count)"))
        }
    }

    @Test("identical requests replay in recorded order, then the last one repeats")
    func repeatsInOrder() async throws {
        let cassette = try Fixtures.temporaryDirectory() + "/c.json"
        let upstream = try await Self.countingUpstream()
        let recorder = try await ProxyHarness.recording(upstream, cassette: cassette)
        for _ in 0..<3 { _ = try await recorder.client.send(.get, "/counter") }
        await recorder.stop()
        await upstream.stop()
        #expect(try CassetteFile.load(cassette).interactions.count == 3)

        let player = try await ProxyHarness.replaying(cassette)
        var answers: [String] = []
        for _ in 0..<4 { answers.append(try await player.client.send(.get, "/counter").text) }
        #expect(answers == ["/counter #1", "/counter #2", "/counter #3", "/counter #3"])
        await player.stop()

        let strict = try await ProxyHarness.replaying(cassette, repeatPolicy: .miss)
        for _ in 0..<3 { #expect(try await strict.client.send(.get, "/counter").status == 200) }
        let fourth = try await strict.client.send(.get, "/counter")
        #expect(fourth.status == 404)
        #expect(fourth.text.contains("already played"))
        await strict.stop()
    }

    @Test("the query matches as a multiset, and a miss names the nearest recording and what differed")
    func queryMultisetAndMiss() async throws {
        let cassette = try Fixtures.temporaryDirectory() + "/c.json"
        let upstream = try await Self.countingUpstream()
        let recorder = try await ProxyHarness.recording(upstream, cassette: cassette)
        _ = try await recorder.client.send(.get, "/search?q=kakapo&page=2&tag=a&tag=b")
        await recorder.stop()
        await upstream.stop()

        let player = try await ProxyHarness.replaying(cassette)
        let reordered = try await player.client.send(.get, "/search?tag=b&page=2&q=kakapo&tag=a")
        #expect(reordered.status == 200)
        #expect(reordered.source == "cassette")

        let miss = try await player.client.send(.get, "/search?q=kakapo&page=3&tag=a&tag=b")
        #expect(miss.status == 404)
        #expect(miss.source == "miss")
        #expect(miss.headers["Content-Type"] == "application/json")
        let report = try JSONParser.parse(miss.body)
        #expect(report["request"]?["url"]?.stringValue == "/search?q=kakapo&page=3&tag=a&tag=b")
        let nearest = try #require(report["nearest"]?.arrayValue?.first)
        #expect(nearest["url"]?.stringValue == "/search?q=kakapo&page=2&tag=a&tag=b")
        #expect(nearest["differences"]?.arrayValue == [.string("query parameter page: 3 here, 2 recorded")])
        let summary = await player.stop()
        #expect(
            summary.misses == [
                "GET /search?q=kakapo&page=3&tag=a&tag=b: query parameter page: 3 here, 2 recorded (interaction 0)"
            ])
    }

    @Test("an unreachable upstream answers 502 with a JSON reason, records nothing, and the server keeps serving")
    func unreachableUpstream() async throws {
        let cassette = try Fixtures.temporaryDirectory() + "/c.json"
        // A port bound by no listener: nothing else can start there while the test runs.
        let gone = try ClosedPort()
        let proxy = try await ProxyHarness.start(
            ProxyConfiguration(
                mode: .new, cassettePath: cassette, upstream: UpstreamConfiguration(baseURL: gone.baseURL)))
        for _ in 0..<2 {
            let response = try await proxy.client.send(.get, "/anything")
            #expect(response.status == 502)
            let body = try JSONParser.parse(response.body)
            #expect(body["code"]?.stringValue == "connection-failed")
            #expect(body["upstream"]?.stringValue == gone.baseURL)
        }
        let health = try await proxy.client.send(.get, "/__kakapo/health")
        #expect(health.status == 200)
        let summary = await proxy.stop()
        #expect(summary.recorded == 0)
        #expect(summary.counts[.error] == 2)
    }

    @Test("shutdown does not wait forever for an endless event stream: the client's connection is closed")
    func shutdownDuringEndlessStream() async throws {
        // 60 seconds of events: shutdown must end it long before (a generous bound, for a loaded machine).
        let events = (0..<600).map { Array("data: \($0)\n\n".utf8) }
        let upstream = try await TestUpstream.start { _ in
            .paced(headers: ["Content-Type": "text/event-stream"], chunks: events, gap: 0.1)
        }
        var configuration = ProxyConfiguration(
            mode: .passthrough, upstream: UpstreamConfiguration(baseURL: upstream.baseURL))
        configuration.shutdownGracePeriod = 0.5
        let proxy = try await ProxyHarness.start(configuration)
        let port = proxy.port
        let reader = Task.detached {
            await withCheckedContinuation { (continuation: CheckedContinuation<(String, Bool), Never>) in
                Thread {
                    let connection = try? RawConnection(port: port, timeout: 30)
                    connection?.send("GET /events HTTP/1.1\r\nHost: localhost\r\n\r\n")
                    continuation.resume(returning: connection?.receive() ?? ("", false))
                }.start()
            }
        }
        while upstream.pacedSends.count < 3 { try await Task.sleep(for: .milliseconds(20)) }
        let started = ContinuousClock.now
        _ = await proxy.stop()
        let (text, closed) = await reader.value
        #expect(ContinuousClock.now - started < .seconds(20), "shutdown waited for the stream")
        #expect(closed && text.contains("data: 2"), "\(text)")
        #expect(!text.contains("\r\n0\r\n\r\n"), "a cut stream must not end with the last chunk")
        await upstream.stop()
    }

    @Test("an upstream that closes without answering gives 502, and a slow one 504 after the timeout")
    func brokenAndSlowUpstream() async throws {
        let cassette = try Fixtures.temporaryDirectory() + "/c.json"
        let upstream = try await TestUpstream.start { request in
            let ok = TestUpstream.Reply.response(HTTP.Response(status: 200, contentType: "text/plain", text: "ok"))
            switch request.path {
            case "/close": return .close
            case "/slow": return .delayed(seconds: 1.5, reply: ok)
            default: return ok
            }
        }
        let proxy = try await ProxyHarness.start(
            ProxyConfiguration(
                mode: .new, cassettePath: cassette,
                upstream: UpstreamConfiguration(baseURL: upstream.baseURL, timeout: 0.5)))
        let closed = try await proxy.client.send(.get, "/close")
        #expect(closed.status == 502)
        #expect(try JSONParser.parse(closed.body)["code"]?.stringValue == "connection-lost")
        let slow = try await proxy.client.send(.get, "/slow")
        #expect(slow.status == 504)
        #expect(try JSONParser.parse(slow.body)["code"]?.stringValue == "timeout")
        let fine = try await proxy.client.send(.get, "/fine")
        #expect(fine.status == 200 && fine.text == "ok")
        let summary = await proxy.stop()
        await upstream.stop()
        #expect(summary.recorded == 1)
        #expect(try CassetteFile.load(cassette).interactions.map(\.request.target) == ["/fine"])
    }

    @Test("passthrough forwards without recording; mode all re-records in place")
    func passthroughAndAll() async throws {
        let directory = try Fixtures.temporaryDirectory()
        let upstream = try await Self.countingUpstream()

        let passthrough = try await ProxyHarness.recording(
            upstream, cassette: directory + "/p.json", mode: .passthrough)
        #expect(try await passthrough.client.send(.get, "/a").text == "/a #1")
        await passthrough.stop()
        #expect(!FileManager.default.fileExists(atPath: directory + "/p.json"))

        let cassette = directory + "/c.json"
        let first = try await ProxyHarness.recording(upstream, cassette: cassette)
        _ = try await first.client.send(.get, "/a")
        _ = try await first.client.send(.get, "/b")
        await first.stop()

        // `new` replays what the cassette has.
        let again = try await ProxyHarness.recording(upstream, cassette: cassette)
        #expect(try await again.client.send(.get, "/a").text == "/a #2")
        await again.stop()

        // `all` forwards everything and replaces the recording in its place.
        let rerecord = try await ProxyHarness.recording(upstream, cassette: cassette, mode: .all)
        let fresh = try await rerecord.client.send(.get, "/a")
        #expect(fresh.text == "/a #3" && fresh.source == "upstream")
        await rerecord.stop()
        await upstream.stop()
        let interactions = try CassetteFile.load(cassette).interactions
        #expect(interactions.map(\.request.target) == ["/a", "/b"])
        #expect(String(decoding: interactions[0].response.body, as: UTF8.self) == "/a #3")
    }

    @Test("a body over the limit gets 413 and other connections keep working")
    func bodyLimit() async throws {
        let cassette = try Fixtures.temporaryDirectory() + "/c.json"
        try CassetteFile.save(Cassette(), to: cassette)
        let proxy = try await ProxyHarness.start(
            ProxyConfiguration(mode: .replay, cassettePath: cassette, maximumRequestBodyBytes: 1000))
        let tooLarge = try await proxy.client.send(.post, "/upload", body: Fixtures.large(5000))
        #expect(tooLarge.status == 413)
        let small = try await proxy.client.send(.post, "/upload", body: Fixtures.large(10))
        #expect(small.status == 404)
        await proxy.stop()
    }

    @Test("a large recorded body (kept ready for the wire) and a small one replay exactly, concurrently")
    func largeAndSmallBodiesReplayExactly() async throws {
        var random = SeededRandom(seed: 7)
        let large = (0..<200_000).map { _ in UInt8.random(in: 0...255, using: &random) }
        let small = Array("small answer".utf8)
        let upstream = try await TestUpstream.start { request in
            .response(
                HTTP.Response(
                    status: 200, headers: ["Content-Type": "application/octet-stream"],
                    body: request.path == "/large" ? large : small))
        }
        let cassette = try Fixtures.temporaryDirectory() + "/c.json"
        let recorder = try await ProxyHarness.recording(upstream, cassette: cassette)
        _ = try await recorder.client.send(.get, "/large")
        _ = try await recorder.client.send(.get, "/small")
        await recorder.stop()
        await upstream.stop()

        let player = try await ProxyHarness.replaying(cassette)
        let bodies = try await withThrowingTaskGroup(of: (String, [UInt8]).self) { group in
            for index in 0..<16 {
                let path = index.isMultiple(of: 2) ? "/large" : "/small"
                group.addTask { (path, try await player.client.send(.get, path).body) }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(bodies.count == 16)
        for (path, body) in bodies { #expect(body == (path == "/large" ? large : small), "\(path)") }
        await player.stop()
    }

    @Test("URLSession talks to a replaying Kakapo")
    func urlSessionClient() async throws {
        let cassette = try Fixtures.temporaryDirectory() + "/c.json"
        let upstream = try await Self.countingUpstream()
        let recorder = try await ProxyHarness.recording(upstream, cassette: cassette)
        _ = try await recorder.client.send(.get, "/users/1")
        await recorder.stop()
        await upstream.stop()

        let player = try await ProxyHarness.replaying(cassette)
        let url = try #require(URL(string: "http://127.0.0.1:\(player.port)/users/1"))
        let (data, response) = try await URLSession.shared.data(from: url)
        let http = try #require(response as? HTTPURLResponse)
        #expect(http.statusCode == 200)
        #expect(http.value(forHTTPHeaderField: "X-Kakapo-Source") == "cassette")
        #expect(String(decoding: data, as: UTF8.self) == "/users/1 #1")
        await player.stop()
    }

    @Test("the admin endpoints report health and the request journal")
    func adminEndpoints() async throws {
        let cassette = try Fixtures.temporaryDirectory() + "/c.json"
        try CassetteFile.save(Cassette(), to: cassette)
        let proxy = try await ProxyHarness.replaying(cassette)
        _ = try await proxy.client.send(.get, "/nothing?api_key=hunter2")
        let journal = try JSONParser.parse(try await proxy.client.send(.get, "/__kakapo/requests").body)
        let entry = try #require(journal["requests"]?.arrayValue?.first)
        #expect(entry["source"]?.stringValue == "miss")
        #expect(entry["url"]?.stringValue == "/nothing?api_key=[REDACTED]")
        #expect(journal["counts"]?["miss"]?.numberValue?.intValue == 1)
        await proxy.stop()
    }

    @Test("a configuration that cannot work is refused before binding")
    func invalidConfiguration() throws {
        #expect(throws: ProxyError.self) {
            try ProxyServer(configuration: ProxyConfiguration(mode: .new, cassettePath: "/tmp/x.json"))
        }
        #expect(throws: CassetteError.self) {
            try ProxyServer(configuration: ProxyConfiguration(mode: .replay, cassettePath: "/nonexistent/c.json"))
        }
        #expect(throws: CassetteError.self) {
            try ProxyServer(
                configuration: ProxyConfiguration(
                    mode: .new, cassettePath: "/nonexistent/dir/c.json",
                    upstream: UpstreamConfiguration(baseURL: "http://127.0.0.1:1")))
        }
    }
}
