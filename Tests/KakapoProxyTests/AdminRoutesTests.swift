import Foundation
import Kakapo
import KakapoTestSupport
import Testing

/// The runtime admin API for routes and request verification, through real sockets.
@Suite("Admin API for routes")
struct AdminRoutesTests {
    @Test("routes added at run time answer at once, before the file's, and can be listed and removed")
    func runtimeRoutes() async throws {
        let harness = try await ProxyHarness.serving(
            routes: #"{"routes": [{"id": "file-users", "path": "/users/:id", "response": {"text": "from file"}}]}"#)
        defer { Task { await harness.stop() } }
        #expect(try await harness.client.send(.get, "/users/1").text == "from file")

        let added = try await harness.send(
            .post, "/__kakapo/routes",
            json: #"{"method": "GET", "path": "/users/:id", "response": {"json": {"id": "{{params.id}}"}}}"#)
        #expect(added.status == 201)
        let id = try #require(try JSONParser.parse(added.body)["id"]?.stringValue)
        #expect(added.headers["Location"] == "/__kakapo/routes/\(id)")
        #expect(try await harness.client.send(.get, "/users/5").text == #"{"id":"5"}"#)

        let named = try await harness.send(
            .post, "/__kakapo/routes", json: #"{"id": "mine", "path": "/x", "response": {}}"#)
        #expect(try JSONParser.parse(named.body)["id"] == "mine")
        #expect(
            try await harness.send(.post, "/__kakapo/routes", json: #"{"id": "mine", "path": "/y", "response": {}}"#)
                .status == 409)

        let list = try JSONParser.parse(try await harness.client.send(.get, "/__kakapo/routes").body)
        let listed = list["routes"]?.arrayValue?.map { [$0["id"]?.stringValue ?? "", $0["origin"]?.stringValue ?? ""] }
        #expect(listed == [["mine", "runtime"], [id, "runtime"], ["file-users", "file"]])
        #expect(list["routes"]?.arrayValue?[1]["route"]?["path"] == "/users/:id")

        #expect(try await harness.client.send(.delete, "/__kakapo/routes/\(id)").status == 204)
        #expect(try await harness.client.send(.get, "/users/5").text == "from file")
        #expect(try await harness.client.send(.delete, "/__kakapo/routes/\(id)").status == 404)
        #expect(try await harness.client.send(.delete, "/__kakapo/routes/file-users").status == 409)

        _ = try await harness.send(
            .post, "/__kakapo/routes", json: #"{"path": "/users/:id", "response": {"status": 418}}"#)
        let cleared = try await harness.client.send(.delete, "/__kakapo/routes")
        #expect(try JSONParser.parse(cleared.body)["removed"] == 2)
        #expect(try await harness.client.send(.get, "/users/5").text == "from file")
    }

    @Test("an invalid route is refused with the key path of the problem")
    func invalidRoute() async throws {
        let harness = try await ProxyHarness.serving(routes: "{}")
        defer { Task { await harness.stop() } }
        let bad = try await harness.send(
            .post, "/__kakapo/routes", json: #"{"path": "/a", "response": {"status": 99}}"#)
        #expect(bad.status == 400)
        #expect(
            try JSONParser.parse(bad.body)["error"] == "response.status: expected an integer from 100 to 599")
        #expect(try await harness.send(.post, "/__kakapo/routes", json: "{").status == 400)
        let escape = try await harness.send(
            .post, "/__kakapo/routes", json: #"{"path": "/a", "response": {"file": "../../etc/passwd"}}"#)
        #expect(escape.status == 400)
        #expect(try JSONParser.parse(escape.body)["error"]?.stringValue?.contains("must be relative") == true)
    }

    @Test(
        "a runtime route's file stays inside the working folder with links resolved: a link out, a folder link out and a FIFO are refused"
    )
    func runtimeFilesConfined() async throws {
        let directory = try Fixtures.temporaryDirectory()
        let outside = try Fixtures.temporaryDirectory()
        try "SECRET=hunter2\n".write(toFile: outside + "/.env", atomically: true, encoding: .utf8)
        try "inside\n".write(toFile: directory + "/inside.txt", atomically: true, encoding: .utf8)
        try FileManager.default.createSymbolicLink(atPath: directory + "/env", withDestinationPath: outside + "/.env")
        try FileManager.default.createSymbolicLink(atPath: directory + "/out", withDestinationPath: outside)
        try FileManager.default.createSymbolicLink(atPath: directory + "/same", withDestinationPath: directory)
        #expect(mkfifo(directory + "/pipe", 0o600) == 0)
        let routes = directory + "/routes.json"
        try "{}".write(toFile: routes, atomically: true, encoding: .utf8)
        var configuration = ProxyConfiguration()
        configuration.port = 0
        let server = try ProxyServer(configuration: configuration)
        try server.pipeline.install(try RoutesFile.load(routes), directory: directory)
        let port = try await server.start()
        let harness = ProxyHarness(server: server, client: try TestClient(port: port), port: port)
        defer { Task { await harness.stop() } }
        for (file, reason) in [
            ("env", "must stay inside"), ("out/.env", "must stay inside"), ("pipe", "must be a regular file"),
        ] {
            let refused = try await harness.send(
                .post, "/__kakapo/routes", json: #"{"path": "/leak", "response": {"file": "\#(file)"}}"#)
            #expect(refused.status == 400, "\(file)")
            #expect(refused.text.contains(reason), "\(file): \(refused.text)")
            #expect(!refused.text.contains("hunter2"))
        }
        #expect(try await harness.client.send(.get, "/leak").text.contains("hunter2") == false)
        // A link that stays inside, and a plain file, are served.
        for file in ["inside.txt", "same/inside.txt"] {
            let added = try await harness.send(
                .post, "/__kakapo/routes", json: #"{"path": "/\#(file)", "response": {"file": "\#(file)"}}"#)
            #expect(added.status == 201, "\(file): \(added.text)")
            #expect(try await harness.client.send(.get, "/" + file).text == "inside\n")
        }
    }

    @Test("requests are counted by method and path pattern, and the count can be cleared")
    func verification() async throws {
        let harness = try await ProxyHarness.serving(
            routes: #"{"routes": [{"path": "/users/:id", "response": {"text": "ok"}}]}"#)
        defer { Task { await harness.stop() } }
        for id in 1...3 { _ = try await harness.client.send(.get, "/users/\(id)?verbose=1") }
        _ = try await harness.client.send(.delete, "/users/1")
        _ = try await harness.client.send(.get, "/other")
        func count(_ query: String) async throws -> JSONValue {
            try JSONParser.parse(try await harness.send(.post, "/__kakapo/requests/count", json: query).body)
        }
        #expect(try await count(#"{"method": "GET", "path": "/users/:id"}"#) == ["count": 3])
        #expect(try await count(#"{"method": "get", "path": "/users/1"}"#) == ["count": 1])
        #expect(try await count(#"{"path": "/users/*"}"#) == ["count": 4])
        #expect(try await count(#"{"path": "/**"}"#) == ["count": 5])
        #expect(try await count(#"{"method": "POST", "path": "/users/:id"}"#) == ["count": 0])
        #expect(try await harness.send(.post, "/__kakapo/requests/count", json: #"{"method": "GET"}"#).status == 400)
        #expect(try await harness.send(.post, "/__kakapo/requests/count", json: #"{"path": "/a/**/b"}"#).status == 400)

        #expect(try await harness.client.send(.delete, "/__kakapo/requests").status == 200)
        #expect(try await count(#"{"path": "/**"}"#) == ["count": 0])
        _ = try await harness.client.send(.get, "/users/9")
        #expect(try await count(#"{"path": "/users/:id"}"#) == ["count": 1])
        let summary = await harness.stop()
        #expect(summary.counts[.route] == 5)
    }

    @Test("the admin routes keep the loopback and token rules")
    func adminRules() async throws {
        var configuration = ProxyConfiguration()
        configuration.adminToken = "secret-token"
        let harness = try await ProxyHarness.serving(routes: "{}", configuration)
        defer { Task { await harness.stop() } }
        #expect(
            try await harness.send(.post, "/__kakapo/routes", json: #"{"path": "/a", "response": {}}"#).status == 401)
        let allowed = try await harness.send(
            .post, "/__kakapo/routes", json: #"{"path": "/a", "response": {}}"#,
            headers: ["Authorization": "Bearer secret-token"])
        #expect(allowed.status == 201)
    }
}
