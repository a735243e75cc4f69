import Foundation
import Kakapo
import KakapoTestSupport
import Testing

/// Cassette sessions (`POST /__kakapo/sessions`) on one server, through real sockets: curl with the
/// `X-Kakapo-Session` header or proxy credentials, a local upstream on port 0.
@Suite("Cassette sessions")
struct SessionTests {
    /// Answers every request with its method and path.
    static func upstream() async throws -> TestUpstream {
        try await TestUpstream.start { request in
            .response(HTTP.Response(status: 200, contentType: "text/plain", text: "\(request.method) \(request.path)"))
        }
    }

    /// A server with sessions in `directory`, in front of `upstream` when given.
    static func server(
        _ directory: String, upstream: TestUpstream?, timeout: Double = 600, token: String? = nil,
        forward: Bool = false, gracePeriod: Double = 10
    ) async throws -> ProxyHarness {
        var configuration = ProxyConfiguration(
            mode: upstream == nil ? .replay : .new,
            upstream: upstream.map { UpstreamConfiguration(baseURL: $0.baseURL) }, adminToken: token)
        configuration.sessionDirectory = directory
        configuration.sessionTimeout = timeout
        configuration.shutdownGracePeriod = gracePeriod
        if forward { configuration.forwardProxy = ForwardProxyConfiguration() }
        return try await ProxyHarness.start(configuration)
    }

    /// `curl --include` with `arguments`: status, lowercased header names to values, body.
    static func curl(_ arguments: [String]) async throws -> (status: Int, headers: [String: String], body: String) {
        try await CurlCall.run(["--include"] + arguments)
    }

    /// An admin call with a JSON body: status and the answer as a dictionary.
    static func admin(
        _ port: Int, _ method: String, _ path: String, _ body: String? = nil, token: String? = nil
    ) async throws -> (status: Int, json: [String: Any]) {
        var arguments = ["-X", method, "http://127.0.0.1:\(port)\(path)"]
        if let body { arguments += ["-H", "Content-Type: application/json", "--data", body] }
        if let token { arguments += ["-H", "Authorization: Bearer \(token)"] }
        let answer = try await curl(arguments)
        let json = (try? JSONSerialization.jsonObject(with: Data(answer.body.utf8))) as? [String: Any] ?? [:]
        return (answer.status, json)
    }

    static func open(_ port: Int, _ body: String) async throws -> String {
        let opened = try await admin(port, "POST", "/__kakapo/sessions", body)
        #expect(opened.status == 201, "\(opened.json)")
        return try #require(opened.json["id"] as? String)
    }

    @Test("sessions on one server record and replay each their own cassette, selected by header")
    func concurrentSessions() async throws {
        let directory = try Fixtures.temporaryDirectory()
        let upstream = try await Self.upstream()
        let proxy = try await Self.server(directory, upstream: upstream)
        let port = proxy.port
        let opened = try await Self.admin(port, "POST", "/__kakapo/sessions", #"{"cassette": "users/get.json"}"#)
        #expect(opened.status == 201)
        let recorder = try #require(opened.json["id"] as? String)
        #expect(recorder.count == 16)
        #expect(opened.json["proxy"] as? String == "http://\(recorder):@127.0.0.1:\(port)")
        #expect((opened.json["header"] as? [String: String])?["X-Kakapo-Session"] == recorder)
        let recorded = try await Self.curl(["-H", "X-Kakapo-Session: \(recorder)", "http://127.0.0.1:\(port)/users/1"])
        #expect(recorded.status == 200)
        #expect(recorded.headers["x-kakapo-source"] == "upstream")
        #expect(upstream.received.allSatisfy { $0.headers["X-Kakapo-Session"] == nil })

        // A second session may not record into the same file while the first is open.
        let clash = try await Self.admin(
            port, "POST", "/__kakapo/sessions", #"{"cassette": "users/get.json", "mode": "all"}"#)
        #expect(clash.status == 409)
        #expect((clash.json["error"] as? String)?.contains("users/get.json") == true)

        let listed = try await Self.admin(port, "GET", "/__kakapo/sessions")
        #expect((listed.json["sessions"] as? [[String: Any]])?.compactMap { $0["id"] as? String } == [recorder])
        let health = try await Self.admin(port, "GET", "/__kakapo/health")
        #expect((health.json["sessions"] as? [String: Any])?["open"] as? Int == 1)

        let ended = try await Self.admin(port, "DELETE", "/__kakapo/sessions/\(recorder)")
        #expect(ended.status == 200)
        #expect(ended.json["recorded"] as? Int == 1)
        #expect(ended.json["cassette"] as? String == "users/get.json")
        let file = try String(contentsOfFile: directory + "/users/get.json", encoding: .utf8)
        #expect(file.contains("/users/1"))
        #expect(!file.lowercased().contains("x-kakapo-session"))

        // Two sessions replay the one file while a third records into another, each in its own mode.
        let first = try await Self.open(port, #"{"cassette": "users/get.json", "mode": "none", "strict": true}"#)
        let second = try await Self.open(port, #"{"cassette": "./users/get.json", "mode": "none"}"#)
        let third = try await Self.open(port, #"{"cassette": "orders/list.json", "mode": "new"}"#)
        let before = upstream.received.count
        async let a = Self.curl(["-H", "X-Kakapo-Session: \(first)", "http://127.0.0.1:\(port)/users/1"])
        async let b = Self.curl(["-H", "X-Kakapo-Session: \(second)", "http://127.0.0.1:\(port)/users/1"])
        async let c = Self.curl(["-H", "X-Kakapo-Session: \(third)", "http://127.0.0.1:\(port)/orders"])
        let (replayA, replayB, recordC) = try await (a, b, c)
        #expect(replayA.headers["x-kakapo-source"] == "cassette")
        #expect(replayA.body == "GET /users/1")
        #expect(replayB.headers["x-kakapo-source"] == "cassette")
        #expect(recordC.headers["x-kakapo-source"] == "upstream")
        #expect(upstream.received.dropFirst(before).map(\.path) == ["/orders"])
        // A miss in a replaying session is a miss there, never forwarded.
        let missed = try await Self.curl(["-H", "X-Kakapo-Session: \(first)", "http://127.0.0.1:\(port)/users/2"])
        #expect(missed.status == 404)
        #expect(missed.headers["x-kakapo-source"] == "miss")
        #expect(missed.body.contains("/users/1"))

        let summary = try await Self.admin(port, "DELETE", "/__kakapo/sessions/\(first)")
        #expect(summary.json["replayed"] as? Int == 1)
        #expect(summary.json["strict"] as? Bool == true)
        let misses = try #require(summary.json["misses"] as? [[String: Any]])
        #expect(misses.count == 1)
        #expect(misses.first?["url"] as? String == "/users/2")
        #expect(((misses.first?["nearest"] as? [[String: Any]])?.first?["url"] as? String) == "/users/1")
        let unusedSummary = try await Self.admin(port, "DELETE", "/__kakapo/sessions/\(second)")
        #expect(unusedSummary.json["replayed"] as? Int == 1)
        #expect((unusedSummary.json["unused"] as? [Any])?.isEmpty == true)
        let thirdSummary = try await Self.admin(port, "DELETE", "/__kakapo/sessions/\(third)")
        #expect(thirdSummary.json["recorded"] as? Int == 1)
        #expect(FileManager.default.fileExists(atPath: directory + "/orders/list.json"))
        await proxy.stop()
        await upstream.stop()
    }

    @Test("proxy credentials name the session, and never reach the upstream or the cassette")
    func proxyCredentials() async throws {
        let directory = try Fixtures.temporaryDirectory()
        let upstream = try await Self.upstream()
        let proxy = try await Self.server(directory, upstream: upstream, forward: true)
        let opened = try await Self.admin(proxy.port, "POST", "/__kakapo/sessions", #"{"cassette": "proxied.json"}"#)
        let url = try #require(opened.json["proxy"] as? String)
        let id = try #require(opened.json["id"] as? String)
        let recorded = try await Self.curl(["--proxy", url, "\(upstream.baseURL)/through/proxy"])
        #expect(recorded.status == 200)
        #expect(recorded.body == "GET /through/proxy")
        #expect(upstream.received.count == 1)
        #expect(upstream.received.first?.headers["Proxy-Authorization"] == nil)
        _ = try await Self.admin(proxy.port, "DELETE", "/__kakapo/sessions/\(id)")
        let file = try String(contentsOfFile: directory + "/proxied.json", encoding: .utf8)
        #expect(file.contains("/through/proxy"))
        #expect(!file.lowercased().contains("proxy-authorization"))

        // Replayed through the same kind of proxy URL with the upstream gone.
        await upstream.stop()
        let replay = try await Self.admin(
            proxy.port, "POST", "/__kakapo/sessions", #"{"cassette": "proxied.json", "mode": "none"}"#)
        let replayURL = try #require(replay.json["proxy"] as? String)
        let replayed = try await Self.curl(["--proxy", replayURL, "\(upstream.baseURL)/through/proxy"])
        #expect(replayed.headers["x-kakapo-source"] == "cassette")
        #expect(replayed.body == "GET /through/proxy")
        await proxy.stop()
    }

    @Test("an unknown session id answers 404 naming it, never the default cassette")
    func unknownSession() async throws {
        let directory = try Fixtures.temporaryDirectory()
        let upstream = try await Self.upstream()
        let proxy = try await Self.server(directory, upstream: upstream)
        let byHeader = try await Self.curl([
            "-H", "X-Kakapo-Session: 0123456789abcdef", "http://127.0.0.1:\(proxy.port)/x",
        ])
        #expect(byHeader.status == 404)
        #expect(byHeader.body.contains("0123456789abcdef"))
        let byProxy = try await Self.curl([
            "--proxy", "http://feedfacefeedface:@127.0.0.1:\(proxy.port)", "\(upstream.baseURL)/x",
        ])
        #expect(byProxy.status == 404)
        #expect(byProxy.body.contains("feedfacefeedface"))
        let deleted = try await Self.admin(proxy.port, "DELETE", "/__kakapo/sessions/0123456789abcdef")
        #expect(deleted.status == 404)
        #expect((deleted.json["error"] as? String)?.contains("0123456789abcdef") == true)
        #expect(upstream.received.isEmpty)
        await proxy.stop()
        await upstream.stop()
    }

    @Test("a cassette path that leaves the directory, or a bad member, is refused with 400 naming it")
    func refusals() async throws {
        let root = try Fixtures.temporaryDirectory()
        let directory = root + "/cassettes"
        try FileManager.default.createDirectory(atPath: directory + "/inside", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: root + "/outside", withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: directory + "/link", withDestinationPath: root + "/outside")
        try FileManager.default.createSymbolicLink(
            atPath: directory + "/inside/file.json", withDestinationPath: root + "/outside/file.json")
        let upstream = try await Self.upstream()
        let proxy = try await Self.server(directory, upstream: upstream)
        let cases: [(String, String)] = [
            (#"{"cassette": "../escape.json"}"#, "../escape.json"),
            (#"{"cassette": "a/../../escape.json"}"#, "a/../../escape.json"),
            (#"{"cassette": "/tmp/escape.json"}"#, "/tmp/escape.json"),
            (#"{"cassette": "link/escape.json"}"#, "link/escape.json"),
            (#"{"cassette": "inside/file.json"}"#, "inside/file.json"),
            (#"{"cassette": "ok.json", "mode": "sometimes"}"#, "\"mode\""),
            (#"{"cassette": "ok.json", "strict": "yes"}"#, "\"strict\""),
            (#"{"cassette": "ok.json", "match": {"ignoreBodyFields": ["id"]}}"#, "match.ignoreBodyFields"),
            (#"{"cassette": "ok.json", "match": {"ignoreQuery": "page"}}"#, "match.ignoreQuery"),
            (#"{"cassette": "ok.json", "colour": "blue"}"#, "colour"),
            (#"{"mode": "none"}"#, "\"cassette\""),
            (#"["ok.json"]"#, "object"),
        ]
        for (body, named) in cases {
            let refused = try await Self.admin(proxy.port, "POST", "/__kakapo/sessions", body)
            #expect(refused.status == 400, "\(body)")
            #expect((refused.json["error"] as? String)?.contains(named) == true, "\(body): \(refused.json)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: root + "/outside").isEmpty)
        let listed = try await Self.admin(proxy.port, "GET", "/__kakapo/sessions")
        #expect((listed.json["sessions"] as? [Any])?.isEmpty == true)
        await proxy.stop()
        await upstream.stop()
    }

    @Test(
        "no session cassette can take another's lock, journal or temporary name: y.json.lock, y.json.journal and .y.json.1.tmp are refused while y.json records"
    )
    func reservedCassetteNames() async throws {
        let directory = try Fixtures.temporaryDirectory()
        let upstream = try await Self.upstream()
        let proxy = try await Self.server(directory, upstream: upstream)
        let id = try await Self.open(proxy.port, #"{"cassette": "y.json", "mode": "all"}"#)
        let recorded = try await Self.curl(["-H", "X-Kakapo-Session: \(id)", "http://127.0.0.1:\(proxy.port)/users/1"])
        #expect(recorded.headers["x-kakapo-source"] == "upstream")
        // The lock is taken on the journal: no file is kept for it alone.
        #expect(FileManager.default.fileExists(atPath: directory + "/y.json.journal"))
        #expect(!FileManager.default.fileExists(atPath: directory + "/y.json.lock"))
        for (name, reason) in [
            ("y.json.lock", "may not end in .lock"), ("y.json.journal", "may not end in .journal"),
            ("sub/y.json.lock", "may not end in .lock"), (".y.json.1.tmp", "the form .NAME.tmp"),
        ] {
            let refused = try await Self.admin(
                proxy.port, "POST", "/__kakapo/sessions", #"{"cassette": "\#(name)", "mode": "all"}"#)
            #expect(refused.status == 400, "\(name)")
            #expect((refused.json["error"] as? String)?.contains(reason) == true, "\(name): \(refused.json)")
        }
        // The recording session's journal is untouched, and its cassette is saved when it ends.
        #expect(FileManager.default.fileExists(atPath: directory + "/y.json.journal"))
        let ended = try await Self.admin(proxy.port, "DELETE", "/__kakapo/sessions/\(id)")
        #expect(ended.json["recorded"] as? Int == 1)
        #expect(try CassetteFile.load(directory + "/y.json").interactions.count == 1)
        await proxy.stop()
        await upstream.stop()
    }

    @Test("a session left idle ends by itself and its recordings are saved")
    func idleExpiry() async throws {
        let directory = try Fixtures.temporaryDirectory()
        let upstream = try await Self.upstream()
        let proxy = try await Self.server(directory, upstream: upstream, timeout: 5)
        // In process (no curl to start), so the request comes well within the timeout on a loaded machine.
        let opened = try await proxy.client.send(
            .post, "/__kakapo/sessions", headers: ["Content-Type": "application/json"],
            body: Array(#"{"cassette": "idle.json"}"#.utf8))
        let json = try JSONSerialization.jsonObject(with: Data(opened.body)) as? [String: Any]
        let id = try #require(json?["id"] as? String)
        let recorded = try await proxy.client.send(.get, "/idle", headers: ["X-Kakapo-Session": id])
        #expect(recorded.status == 200, "\(recorded.text)")
        var open = true
        for _ in 0..<600 where open {
            try await Task.sleep(for: .milliseconds(50))
            let listed = try await Self.admin(proxy.port, "GET", "/__kakapo/sessions")
            open = (listed.json["sessions"] as? [Any])?.isEmpty == false
        }
        #expect(!open)
        let file = try String(contentsOfFile: directory + "/idle.json", encoding: .utf8)
        #expect(file.contains("/idle"))
        let after = try await Self.curl(["-H", "X-Kakapo-Session: \(id)", "http://127.0.0.1:\(proxy.port)/idle"])
        #expect(after.status == 404)
        await proxy.stop()
        await upstream.stop()
    }

    @Test("the sessions endpoints follow the admin token rule")
    func adminToken() async throws {
        let directory = try Fixtures.temporaryDirectory()
        let proxy = try await Self.server(directory, upstream: nil, token: "session-token-1")
        let refused = try await Self.admin(proxy.port, "POST", "/__kakapo/sessions", #"{"cassette": "a.json"}"#)
        #expect(refused.status == 401)
        let listRefused = try await Self.admin(proxy.port, "GET", "/__kakapo/sessions")
        #expect(listRefused.status == 401)
        // No upstream: only replay, and replay needs the file.
        let missing = try await Self.admin(
            proxy.port, "POST", "/__kakapo/sessions", #"{"cassette": "a.json", "mode": "new"}"#,
            token: "session-token-1")
        #expect(missing.status == 400)
        #expect((missing.json["error"] as? String)?.contains("upstream") == true)
        await proxy.stop()
    }

    @Test("a session with \"store\": \"own\" gets the routes-file resources seeded afresh, seeing no one else's writes")
    func ownStore() async throws {
        let directory = try Fixtures.temporaryDirectory()
        try #"{"version": 1, "interactions": []}"#.write(
            toFile: directory + "/empty.json", atomically: true, encoding: .utf8)
        var configuration = ProxyConfiguration()
        configuration.sessionDirectory = directory
        let proxy = try await ProxyHarness.serving(
            routes: #"{"resources": [{"path": "/todos", "seed": [{"id": 1, "title": "seeded"}]}]}"#, configuration)
        let own = try await Self.open(proxy.port, #"{"cassette": "empty.json", "mode": "none", "store": "own"}"#)
        let other = try await Self.open(proxy.port, #"{"cassette": "empty.json", "mode": "none", "store": "own"}"#)
        let shared = try await Self.open(proxy.port, #"{"cassette": "empty.json", "mode": "none"}"#)
        let created = try await Self.curl([
            "-H", "X-Kakapo-Session: \(own)", "-H", "Content-Type: application/json", "--data",
            #"{"id": 2, "title": "mine"}"#, "http://127.0.0.1:\(proxy.port)/todos",
        ])
        #expect(created.status == 201, "\(created.body)")
        func titles(_ session: String?) async throws -> Int {
            let headers = session.map { ["-H", "X-Kakapo-Session: \($0)"] } ?? []
            let list = try await Self.curl(headers + ["http://127.0.0.1:\(proxy.port)/todos"])
            return list.body.components(separatedBy: "\"title\"").count - 1
        }
        #expect(try await titles(own) == 2)
        #expect(try await titles(other) == 1)
        #expect(try await titles(shared) == 1)
        #expect(try await titles(nil) == 1)
        let refused = try await Self.admin(
            proxy.port, "POST", "/__kakapo/sessions", #"{"cassette": "empty.json", "mode": "none", "store": "mine"}"#)
        #expect(refused.status == 400)
        #expect((refused.json["error"] as? String)?.contains("\"store\"") == true)
        await proxy.stop()
    }

    @Test("ending a session waits for its request in flight, whose recording is saved with the rest")
    func endWaitsForRequestsInFlight() async throws {
        let directory = try Fixtures.temporaryDirectory()
        let upstream = try await TestUpstream.start { request in
            .delayed(
                seconds: 1, reply: .response(HTTP.Response(status: 200, contentType: "text/plain", text: request.path)))
        }
        let proxy = try await Self.server(directory, upstream: upstream)
        let id = try await Self.open(proxy.port, #"{"cassette": "slow.json"}"#)
        async let slow = proxy.client.send(.get, "/slow", headers: ["X-Kakapo-Session": id])
        while upstream.received.isEmpty { try await Task.sleep(for: .milliseconds(10)) }
        let ended = try await Self.admin(proxy.port, "DELETE", "/__kakapo/sessions/\(id)")
        #expect(ended.json["recorded"] as? Int == 1)
        #expect(try await slow.status == 200)
        let file = try String(contentsOfFile: directory + "/slow.json", encoding: .utf8)
        #expect(file.contains("/slow"))
        await proxy.stop()
        await upstream.stop()
    }

    /// An upstream that answers `/events` with `count` server-sent events, `gap` seconds apart.
    static func streaming(count: Int, gap: Double) async throws -> TestUpstream {
        try await TestUpstream.start { _ in
            .paced(
                headers: ["Content-Type": "text/event-stream"],
                chunks: (1...count).map { Array("data: \($0)\n\n".utf8) }, gap: gap)
        }
    }

    @Test("ending a session waits for its streamed answer in flight, which is recorded whole with its chunks")
    func endWaitsForStreams() async throws {
        let directory = try Fixtures.temporaryDirectory()
        let upstream = try await Self.streaming(count: 3, gap: 0.5)
        let proxy = try await Self.server(directory, upstream: upstream)
        let id = try await Self.open(proxy.port, #"{"cassette": "stream.json"}"#)
        async let streamed = Self.curl(["-N", "-H", "X-Kakapo-Session: \(id)", "http://127.0.0.1:\(proxy.port)/events"])
        while upstream.received.isEmpty { try await Task.sleep(for: .milliseconds(10)) }
        let ended = try await Self.admin(proxy.port, "DELETE", "/__kakapo/sessions/\(id)")
        #expect(ended.json["recorded"] as? Int == 1, "\(ended.json)")
        #expect(try await streamed.body.contains("data: 3"))
        let interaction = try #require(try CassetteFile.load(directory + "/stream.json").interactions.first)
        #expect(interaction.chunks?.count == 3, "\(interaction.chunks ?? [])")
        #expect(!interaction.abandoned)
        await proxy.stop()
        await upstream.stop()
    }

    @Test(
        "a stream still going when its session ends, past the grace period, is recorded as it stands, marked abandoned, and the log says why"
    )
    func endCutsLongStreams() async throws {
        let directory = try Fixtures.temporaryDirectory()
        let upstream = try await Self.streaming(count: 60, gap: 0.5)
        let proxy = try await Self.server(directory, upstream: upstream, gracePeriod: 1)
        let id = try await Self.open(proxy.port, #"{"cassette": "long.json"}"#)
        let reader = try RawConnection(port: proxy.port)
        reader.send("GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Kakapo-Session: \(id)\r\n\r\n")
        #expect(reader.receive(until: { $0.contains("data: 2") }).text.contains("data: 2"))
        let started = ContinuousClock.now
        let ended = try await Self.admin(proxy.port, "DELETE", "/__kakapo/sessions/\(id)")
        // A hang guard: the grace period is 1 s, the stream 30 s.
        #expect(ContinuousClock.now - started < .seconds(20))
        #expect(ended.json["recorded"] as? Int == 1, "\(ended.json)")
        let interaction = try #require(try CassetteFile.load(directory + "/long.json").interactions.first)
        #expect(interaction.abandoned)
        let count = interaction.chunks?.count ?? 0
        #expect(count >= 2 && count < 60, "\(count) chunks")
        reader.closeNow()
        await proxy.stop()
        await upstream.stop()
    }
}
