import Foundation
import Kakapo
import KakapoTestSupport
import NIOConcurrencyHelpers
import Testing

private struct User: Storable, Codable {
    let id: String
    let name: String
    init(id: String, store: Store) {
        self.id = id
        self.name = "User \(id)"
    }
    init(id: String, name: String) {
        self.id = id
        self.name = name
    }
}

private struct NewUser: Decodable {
    let name: String
}

private struct Counter: Storable, Codable {
    let id: String
    var value: Int
    init(id: String, store: Store) {
        self.id = id
        self.value = 0
    }
}

/// Routes and the Store in front of the cassette, end to end through the real server.
@Suite("Routes and the Store")
struct DynamicFallbackTests {
    /// A cassette with GET /users/1 and GET /repos recorded from a real upstream.
    static func recordedCassette() async throws -> String {
        let cassette = try Fixtures.temporaryDirectory() + "/api.json"
        let upstream = try await TestUpstream.start { request in
            .response(
                HTTP.Response(status: 200, contentType: "application/json", text: #"{"recorded":"\#(request.path)"}"#))
        }
        let recorder = try await ProxyHarness.recording(upstream, cassette: cassette)
        _ = try await recorder.client.send(.get, "/users/1")
        _ = try await recorder.client.send(.get, "/repos")
        await recorder.stop()
        await upstream.stop()
        return cassette
    }

    @Test("a route beats the cassette for the same path; everything else still replays")
    func routeBeatsCassette() async throws {
        let store = Store()
        store.create(User.self, number: 20)
        let server = try ProxyServer(cassette: try await Self.recordedCassette())
        server.router.get("/users/:id") { request in
            store.find(User.self, id: try request.parameters.require("id"))
        }
        server.router.post("/users") { request in
            let body = try request.decode(NewUser.self)
            return Response(statusCode: 201, body: store.insert { id in User(id: id, name: body.name) })
        }
        let port = try await server.start(port: 0)
        let client = try TestClient(port: port)

        let user = try await client.send(.get, "/users/3")
        #expect(user.status == 200 && user.text == #"{"id":"3","name":"User 3"}"#)
        #expect(user.headers["X-Kakapo-Source"] == "route")
        let overridden = try await client.send(.get, "/users/1")
        #expect(overridden.text == #"{"id":"1","name":"User 1"}"#, "the route wins over the recording")
        let repos = try await client.send(.get, "/repos")
        #expect(repos.text == #"{"recorded":"/repos"}"# && repos.headers["X-Kakapo-Source"] == "cassette")

        let created = try await client.send(
            .post, "/users", headers: ["Content-Type": "application/json"], body: Array(#"{"name":"Ada"}"#.utf8))
        #expect(created.status == 201 && created.text == #"{"id":"20","name":"Ada"}"#)
        #expect(try await client.send(.get, "/users/20").text == #"{"id":"20","name":"Ada"}"#)
        let invalid = try await client.send(.post, "/users", body: Array(#"{"nom":"x"}"#.utf8))
        #expect(invalid.status == 400)
        #expect(invalid.text.contains("missing \\\"name\\\""))

        client.shutdown()
        let summary = await server.shutdown()
        #expect(summary.counts[.route] == 5)
        #expect(summary.counts[.cassette] == 1)
        #expect(summary.text.contains("5 route"))
    }

    @Test("a handler that throws answers 500 with a JSON error and the server keeps serving")
    func throwingHandler() async throws {
        struct Boom: Error {}
        let server = try ProxyServer()
        server.router.get("/boom") { _ in throw Boom() }
        server.router.get("/fine") { _ in ["ok": true] }
        let client = try TestClient(port: try await server.start(port: 0))
        let boom = try await client.send(.get, "/boom")
        #expect(boom.status == 500)
        #expect(try JSONParser.parse(boom.body)["route"] == "GET /boom")
        #expect(try await client.send(.get, "/fine").text == #"{"ok":true}"#)
        let nothing = try await client.send(.get, "/nothing")
        #expect(nothing.status == 404 && nothing.headers["X-Kakapo-Source"] == "miss")
        client.shutdown()
        await server.shutdown()
    }

    @Test("store resources: POST then GET, PATCH, PUT, DELETE, 404 for unknown ids")
    func storeResources() async throws {
        let store = Store()
        store.create(User.self, number: 2)
        let server = try ProxyServer()
        server.resources.add(User.self, at: "/users", in: store)
        let client = try TestClient(port: try await server.start(port: 0))

        let created = try await client.send(.post, "/users", body: Array(#"{"name":"Grace","id":"ignored"}"#.utf8))
        #expect(created.status == 201)
        #expect(created.text == #"{"id":"2","name":"Grace"}"#)
        #expect(created.headers["Location"] == "/users/2")
        #expect(created.headers["X-Kakapo-Source"] == "store")
        #expect(try await client.send(.get, "/users/2").text == #"{"id":"2","name":"Grace"}"#)
        #expect(try await client.send(.get, "/users").text.hasPrefix(#"[{"id":"0","name":"User 0"}"#))
        let patched = try await client.send(.patch, "/users/2", body: Array(#"{"name":"Grace Hopper"}"#.utf8))
        #expect(patched.text == #"{"id":"2","name":"Grace Hopper"}"#)
        let replaced = try await client.send(.put, "/users/0", body: Array(#"{"name":"Zero"}"#.utf8))
        #expect(replaced.status == 200 && store.find(User.self, id: "0")?.name == "Zero")
        #expect(try await client.send(.delete, "/users/1").status == 204)
        let gone = try await client.send(.get, "/users/1")
        #expect(gone.status == 404)
        #expect(try JSONParser.parse(gone.body)["error"] == #"no User with id "1""#)
        #expect(try await client.send(.delete, "/users/1").status == 404)
        #expect(store.findAll(User.self).map(\.id) == ["0", "2"])

        let dump = try JSONParser.parse(try await client.send(.get, "/__kakapo/store").body)
        #expect(dump["stores"]?.arrayValue?.first?["entities"]?["User"]?.arrayValue?.count == 2)
        #expect(try await client.send(.delete, "/__kakapo/store").status == 200)
        #expect(store.findAll(User.self).isEmpty)
        client.shutdown()
        await server.shutdown()
    }

    @Test("200 concurrent requests mutating the Store leave it consistent")
    func concurrentMutation() async throws {
        let store = Store()
        let counter = try #require(store.create(Counter.self).first)
        let lock = NSLock()
        let server = try ProxyServer()
        server.router.post("/counter/increment") { _ in
            // Read-modify-write under the handler's own lock: the Store must not lose any update.
            lock.withLock {
                var current = store.find(Counter.self, id: counter.id)!
                current.value += 1
                try? store.update(current)
            }
            return nil
        }
        server.router.post("/users") { request in store.insert { id in User(id: id, name: request.text) } }
        let client = try TestClient(port: try await server.start(port: 0))
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for index in 0..<200 {
                group.addTask {
                    index.isMultiple(of: 2)
                        ? try await client.send(.post, "/counter/increment").status
                        : try await client.send(.post, "/users", body: Array("u\(index)".utf8)).status
                }
            }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(statuses.allSatisfy { $0 == 200 })
        #expect(store.find(Counter.self, id: counter.id)?.value == 100)
        let users = store.findAll(User.self)
        #expect(users.count == 100)
        #expect(Set(users.map(\.id)).count == 100)
        client.shutdown()
        await server.shutdown()
    }

    @Test("a conflicting route stops the server from starting, naming the pattern")
    func conflictAtStart() async throws {
        let server = try ProxyServer()
        server.router.get("/a/:id") { _ in nil }
        server.router.get("/a/:name") { _ in nil }
        await #expect(throws: RouterError.self) { try await server.start(port: 0) }
        await server.shutdown()
    }

    @Test("router latency delays answers without blocking other requests")
    func latencyDoesNotBlock() async throws {
        // The request left waiting at the end is not waited for at shutdown.
        var configuration = ProxyConfiguration(mode: .replay)
        configuration.shutdownGracePeriod = 0.1
        let server = try ProxyServer(configuration: configuration)
        let slow = try server.register("/slow")
        slow.latency = .milliseconds(500)
        slow.get("/x") { _ in "slow" }
        // A route whose answer waits far longer than any test: the fast answer must not wait behind it.
        let entered = NIOLockedValueBox(false)
        let stuck = try server.register("/stuck")
        stuck.latency = .seconds(3600)
        stuck.get("/x") { _ in
            entered.withLockedValue { $0 = true }
            return "stuck"
        }
        server.router.get("/fast") { _ in "fast" }
        let client = try TestClient(port: try await server.start(port: 0))

        let started = ContinuousClock.now
        let slowAnswer = try await client.send(.get, "/slow/x")
        #expect(slowAnswer.text == #""slow""#)
        #expect(ContinuousClock.now - started >= .milliseconds(500))

        let stuckTask = Task { try await client.send(.get, "/stuck/x") }
        // The route's handler ran, so its answer now waits out the latency (a bound against a hang only).
        let deadline = ContinuousClock.now + .seconds(60)
        while !entered.withLockedValue({ $0 }) && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(entered.withLockedValue { $0 })
        let fast = try await client.send(.get, "/fast")
        #expect(fast.text == #""fast""#, "the fast route answered while the other one was waiting")
        stuckTask.cancel()
        client.shutdown()
        await server.shutdown()
    }
}
