import Foundation
import Kakapo
import KakapoTestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Kakapo in process: a real URLSession answered by the pipeline, with no socket of Kakapo's own.
@Suite("Kakapo in process")
struct InProcessTests {
    /// An upstream that answers JSON naming the request, a 302 for /old, and reads POST bodies back.
    static func upstream() async throws -> TestUpstream {
        try await TestUpstream.start { request in
            if request.path == "/old" {
                return .response(HTTP.Response(status: 302, headers: ["Location": "/new", "Content-Length": "0"]))
            }
            let body = String(decoding: request.body, as: UTF8.self)
            return .response(
                HTTP.Response(
                    status: request.method == .post ? 201 : 200, contentType: "application/json",
                    text:
                        #"{"method":"\#(request.method)","path":"\#(request.path)","body":\#(body.isEmpty ? "null" : body)}"#
                ))
        }
    }

    static func json(_ data: Data) throws -> JSONValue { try JSONParser.parse(Array(data)) }

    @Test("GET and POST with a JSON body are recorded through the upstream, then replayed with it stopped")
    func recordThenReplay() async throws {
        let cassette = try Fixtures.temporaryDirectory() + "/in-process.json"
        let upstream = try await Self.upstream()
        let recorder = try InProcessKakapo(cassette: cassette, mode: .new, upstream: upstream.baseURL)
        let session = URLSession(configuration: recorder.sessionConfiguration())
        let (data, response) = try await session.data(from: URL(string: "http://api.test/users/1?x=1")!)
        let http = try #require(response as? HTTPURLResponse)
        #expect(http.statusCode == 200)
        #expect(http.value(forHTTPHeaderField: "X-Kakapo-Source") == "upstream")
        #expect(try Self.json(data) == ["method": "GET", "path": "/users/1", "body": nil])
        var post = URLRequest(url: URL(string: "http://api.test/users")!)
        post.httpMethod = "POST"
        post.setValue("application/json", forHTTPHeaderField: "Content-Type")
        post.httpBody = Data(#"{"name":"Ada"}"#.utf8)
        let (created, createdResponse) = try await session.data(for: post)
        #expect((createdResponse as? HTTPURLResponse)?.statusCode == 201)
        #expect(try Self.json(created)["body"] == ["name": "Ada"])
        let (moved, movedResponse) = try await session.data(from: URL(string: "http://api.test/old")!)
        #expect(movedResponse.url?.path == "/new")
        let summary = await recorder.shutdown()
        #expect(summary.recorded == 4)
        await upstream.stop()

        let replayer = try InProcessKakapo(cassette: cassette)
        let replaySession = URLSession(configuration: replayer.sessionConfiguration())
        let (again, againResponse) = try await replaySession.data(from: URL(string: "http://api.test/users/1?x=1")!)
        #expect((againResponse as? HTTPURLResponse)?.value(forHTTPHeaderField: "X-Kakapo-Source") == "cassette")
        #expect(again == data)
        let (replayed, _) = try await replaySession.data(for: post)
        #expect(try Self.json(replayed)["body"] == ["name": "Ada"])
        // The recorded 302 and the page it led to, both from the cassette.
        let (movedAgain, movedAgainResponse) = try await replaySession.data(from: URL(string: "http://api.test/old")!)
        #expect(movedAgainResponse.url?.path == "/new")
        #expect(movedAgain == moved)
        let (_, missResponse) = try await replaySession.data(from: URL(string: "http://api.test/users/2")!)
        #expect((missResponse as? HTTPURLResponse)?.statusCode == 404)
        #expect((missResponse as? HTTPURLResponse)?.value(forHTTPHeaderField: "X-Kakapo-Source") == "miss")
        // The same cassette through a socket server gives the same answer.
        let socket = try ProxyServer(configuration: ProxyConfiguration(port: 0, mode: .replay, cassettePath: cassette))
        let client = try TestClient(port: try await socket.start())
        let overSocket = try await client.send(.get, "/users/1?x=1")
        #expect(overSocket.status == 200)
        #expect(Data(overSocket.body) == again)
        #expect(
            overSocket.headers["Content-Type"]
                == (againResponse as? HTTPURLResponse)?.value(forHTTPHeaderField: "Content-Type"))
        client.shutdown()
        await socket.shutdown()
        let replaySummary = await replayer.shutdown()
        #expect(replaySummary.counts[.cassette] == 4)
        #expect(
            replaySummary.misses == [
                "GET /users/2: path: /users/2 here, /users/1 recorded (interaction 0, and 1 more difference)"
            ])
    }

    @Test("an upload from a stream is read whole, and a 302 takes URLSession to the new location")
    func streamAndRedirect() async throws {
        let upstream = try await Self.upstream()
        defer { Task { await upstream.stop() } }
        let kakapo = try InProcessKakapo(
            configuration: ProxyConfiguration(
                mode: .passthrough, upstream: UpstreamConfiguration(baseURL: upstream.baseURL)))
        let session = URLSession(configuration: kakapo.sessionConfiguration())
        var upload = URLRequest(url: URL(string: "http://api.test/upload")!)
        upload.httpMethod = "POST"
        let payload = #"{"items":[\#((0..<2000).map(String.init).joined(separator: ","))]}"#
        upload.httpBodyStream = InputStream(data: Data(payload.utf8))
        let (echoed, _) = try await session.data(for: upload)
        #expect(try Self.json(echoed)["body"]?["items"]?.arrayValue?.count == 2000)
        #expect(upstream.received.last?.body.count == payload.utf8.count)

        let (landed, response) = try await session.data(from: URL(string: "http://api.test/old")!)
        #expect(response.url?.path == "/new")
        #expect(try Self.json(landed)["path"] == "/new")
        #expect(upstream.received.map(\.path).suffix(2) == ["/old", "/new"])
        await kakapo.shutdown()
    }

    @Test("routes and Store resources answer before the cassette, in process as over a socket")
    func routesAndStore() async throws {
        let cassette = try Fixtures.temporaryDirectory() + "/api.json"
        let upstream = try await Self.upstream()
        let recorder = try InProcessKakapo(cassette: cassette, mode: .new, upstream: upstream.baseURL)
        let recording = URLSession(configuration: recorder.sessionConfiguration())
        _ = try await recording.data(from: URL(string: "http://api.test/users/1")!)
        _ = try await recording.data(from: URL(string: "http://api.test/repos")!)
        await recorder.shutdown()
        await upstream.stop()

        let kakapo = try InProcessKakapo(cassette: cassette)
        kakapo.router.get("/users/:id") { request in ["id": try request.parameters.require("id"), "from": "route"] }
        try kakapo.pipeline.install(
            RoutesDefinition(
                JSONParser.parse(#"{"resources": [{"path": "/todos", "seed": [{"id": 1, "title": "a"}]}]}"#),
                context: DefinitionContext(baseDirectory: "/", idPrefix: "test")))
        let session = URLSession(configuration: kakapo.sessionConfiguration())
        let (user, userResponse) = try await session.data(from: URL(string: "http://api.test/users/1")!)
        #expect(try Self.json(user).isEquivalent(to: ["id": "1", "from": "route"]))
        #expect((userResponse as? HTTPURLResponse)?.value(forHTTPHeaderField: "X-Kakapo-Source") == "route")
        let (_, repos) = try await session.data(from: URL(string: "http://api.test/repos")!)
        #expect((repos as? HTTPURLResponse)?.value(forHTTPHeaderField: "X-Kakapo-Source") == "cassette")
        var create = URLRequest(url: URL(string: "http://api.test/todos")!)
        create.httpMethod = "POST"
        create.httpBody = Data(#"{"title": "b"}"#.utf8)
        let (_, created) = try await session.data(for: create)
        #expect((created as? HTTPURLResponse)?.statusCode == 201)
        #expect((created as? HTTPURLResponse)?.value(forHTTPHeaderField: "X-Kakapo-Source") == "store")
        let (list, _) = try await session.data(from: URL(string: "http://api.test/todos")!)
        #expect(try Self.json(list).arrayValue?.count == 2)
        let summary = await kakapo.shutdown()
        #expect(summary.counts[.route] == 1)
        #expect(summary.counts[.store] == 2)
        #expect(summary.counts[.cassette] == 1)
    }

    @Test("an upstream that refuses the connection, and route faults, surface as URLErrors")
    func failures() async throws {
        let kakapo = try InProcessKakapo(mode: .passthrough, upstream: "http://127.0.0.1:1")
        try kakapo.pipeline.install(
            RoutesDefinition(
                JSONParser.parse(
                    #"{"routes": [{"path": "/reset", "fault": "connection-reset", "response": {}}, {"path": "/junk", "fault": "malformed-response", "response": {}}]}"#
                ), context: DefinitionContext(baseDirectory: "/", idPrefix: "test")))
        let session = URLSession(configuration: kakapo.sessionConfiguration())
        do {
            _ = try await session.data(from: URL(string: "http://api.test/anything")!)
            Issue.record("a refused connection gave an answer")
        } catch let error as URLError {
            #expect(error.code == .cannotConnectToHost)
        }
        do {
            _ = try await session.data(from: URL(string: "http://api.test/reset")!)
            Issue.record("a reset gave an answer")
        } catch let error as URLError {
            #expect(error.code == .networkConnectionLost)
        }
        do {
            _ = try await session.data(from: URL(string: "http://api.test/junk")!)
            Issue.record("a malformed answer was accepted")
        } catch let error as URLError {
            #expect(error.code == .badServerResponse)
        }
        await kakapo.shutdown()
    }

    @Test("50 concurrent tasks each get their own answer; two instances at once keep to their own sessions")
    func concurrency() async throws {
        let first = try InProcessKakapo()
        first.router.get("/n/:n") { request in ["n": try request.parameters.require("n"), "instance": "first"] }
        let second = try InProcessKakapo()
        second.router.get("/n/:n") { request in ["n": try request.parameters.require("n"), "instance": "second"] }
        let sessions = [
            URLSession(configuration: first.sessionConfiguration()),
            URLSession(configuration: second.sessionConfiguration()),
        ]
        try await withThrowingTaskGroup(of: (Int, JSONValue).self) { group in
            for index in 0..<50 {
                group.addTask {
                    let (data, _) = try await sessions[index % 2].data(from: URL(string: "http://api.test/n/\(index)")!)
                    return (index, try Self.json(data))
                }
            }
            for try await (index, body) in group {
                #expect(body["n"] == .string(String(index)))
                #expect(body["instance"] == .string(index % 2 == 0 ? "first" : "second"))
            }
        }
        #expect((await first.shutdown()).counts[.route] == 25)
        #expect((await second.shutdown()).counts[.route] == 25)
    }

    #if canImport(Darwin)
        @Test("enable() answers URLSession.shared; disable() stops it")
        func globalRegistration() async throws {
            let kakapo = try InProcessKakapo()
            kakapo.router.get("/shared") { _ in ["via": "shared"] }
            kakapo.enable()
            let (data, response) = try await URLSession.shared.data(from: URL(string: "http://api.test/shared")!)
            #expect(try Self.json(data) == ["via": "shared"])
            #expect((response as? HTTPURLResponse)?.value(forHTTPHeaderField: "X-Kakapo-Source") == "route")
            let (_, miss) = try await URLSession.shared.data(from: URL(string: "http://api.test/other")!)
            #expect((miss as? HTTPURLResponse)?.statusCode == 404)
            kakapo.disable()
            #expect(await kakapo.shutdown().total == 2)
        }
    #endif
}
