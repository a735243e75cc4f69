import Foundation
import Kakapo
import KakapoPostgres
import KakapoTestSupport
import Testing

/// Store resources kept in a real PostgreSQL server and shared by several `kakapo` processes: writes
/// seen by every process, unique ids under concurrent creates, concurrent PATCHes that lose nothing,
/// resets, a database stopped and restarted mid-run, and bad URLs and credentials. Serialized: one test
/// stops the server.
@Suite("Shared Store (PostgreSQL)", .serialized, .enabled(if: TestDatabase.available))
struct SharedStoreTests {
    static let routes = """
        {"resources": [{"path": "/todos", "seed": [{"id": 1, "title": "seeded", "done": false}]}]}
        """

    /// A routes file with the todos resource, in a folder of its own.
    static func routesFile() throws -> String {
        let file = try Fixtures.temporaryDirectory() + "/todos.routes.json"
        try routes.write(toFile: file, atomically: true, encoding: .utf8)
        return file
    }

    /// A `kakapo serve` on a free port sharing `database`, and a client for it.
    static func replica(_ database: String, routes: String) async throws -> (KakapoProcess, TestClient) {
        let process = try KakapoProcess(["serve", "--routes", routes, "--store", database, "--port", "0"])
        let client = try TestClient(port: try await process.waitUntilListening())
        return (process, client)
    }

    static func json(_ text: String) -> [UInt8] { Array(text.utf8) }

    /// A fresh database, the routes file, and two replicas sharing them.
    static func twoReplicas() async throws -> (
        database: String, routes: String, (KakapoProcess, TestClient), (KakapoProcess, TestClient)
    ) {
        let database = try await TestDatabase.fresh()
        let routes = try routesFile()
        return (
            database, routes, try await replica(database, routes: routes), try await replica(database, routes: routes)
        )
    }

    /// Stops replicas the way an operator does (SIGTERM) and waits for them.
    static func stop(_ replicas: [(KakapoProcess, TestClient)]) async throws {
        for (process, client) in replicas {
            client.shutdown()
            process.send(SIGTERM)
            _ = try await process.waitForExit()
        }
    }

    @Test("two processes share entities: what one writes, the other reads; a restart keeps them")
    func sharing() async throws {
        let (database, routes, (first, a), (second, b)) = try await Self.twoReplicas()
        #expect(try await b.send(.get, "/todos").text == #"[{"id":1,"title":"seeded","done":false}]"#)
        let created = try await a.send(.post, "/todos", body: Self.json(#"{"title":"from a"}"#))
        #expect(created.status == 201, "\(created.text)")
        #expect(created.text == #"{"title":"from a","id":"0"}"#)
        #expect(created.headers["Location"] == "/todos/0")
        #expect(try await b.send(.get, "/todos/0").text == #"{"title":"from a","id":"0"}"#)
        let patched = try await b.send(.patch, "/todos/1", body: Self.json(#"{"done":true}"#))
        #expect(patched.text == #"{"id":1,"title":"seeded","done":true}"#)
        #expect(try await a.send(.get, "/todos?done=true").text == #"[{"id":1,"title":"seeded","done":true}]"#)
        #expect(try await a.send(.delete, "/todos/0").status == 204)
        #expect(try await b.send(.get, "/todos/0").status == 404)

        // A replica started later, or a restarted one, keeps what was written (the seed is not put back).
        try await Self.stop([(first, a)])
        let (third, c) = try await Self.replica(database, routes: routes)
        #expect(try await c.send(.get, "/todos/1").text == #"{"id":1,"title":"seeded","done":true}"#)
        try await Self.stop([(second, b), (third, c)])
    }

    @Test("concurrent creates through both processes get distinct ids; concurrent PATCHes lose no field")
    func concurrency() async throws {
        let (_, _, (first, a), (second, b)) = try await Self.twoReplicas()
        let ids = try await withThrowingTaskGroup(of: String.self) { group in
            for index in 0..<60 {
                let client = index.isMultiple(of: 2) ? a : b
                group.addTask {
                    let response = try await client.send(.post, "/todos", body: Self.json(#"{"n":\#(index)}"#))
                    return try JSONParser.parse(response.body)["id"]?.stringValue ?? "none"
                }
            }
            return try await group.reduce(into: [String]()) { $0.append($1) }
        }
        #expect(Set(ids).count == 60)
        #expect(!ids.contains("1"), "the seeded id was given out again")
        let listed = try JSONParser.parse(try await b.send(.get, "/todos").body)
        #expect(listed.arrayValue?.count == 61)

        try await withThrowingTaskGroup(of: Int.self) { group in
            for index in 0..<40 {
                let client = index.isMultiple(of: 2) ? a : b
                group.addTask {
                    try await client.send(.patch, "/todos/1", body: Self.json(#"{"field\#(index)":\#(index)}"#)).status
                }
            }
            for try await status in group { #expect(status == 200) }
        }
        let merged = try JSONParser.parse(try await a.send(.get, "/todos/1").body)
        #expect(merged.objectValue?.count == 3 + 40)
        for index in 0..<40 { #expect(merged["field\(index)"]?.numberValue?.intValue == index) }
        try await Self.stop([(first, a), (second, b)])
    }

    @Test("concurrent POSTs of one new id through both processes: exactly one 201, the others 409, nothing replaced")
    func concurrentCreatesOfOneId() async throws {
        let (_, _, (first, a), (second, b)) = try await Self.twoReplicas()
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for index in 0..<20 {
                let client = index.isMultiple(of: 2) ? a : b
                group.addTask {
                    try await client.send(.post, "/todos", body: Self.json(#"{"id":"race","n":\#(index)}"#)).status
                }
            }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(statuses.filter { $0 == 201 }.count == 1, "\(statuses)")
        #expect(statuses.filter { $0 == 409 }.count == 19, "\(statuses)")
        let seeded = try await a.send(.post, "/todos", body: Self.json(#"{"id":1,"title":"replaced?"}"#))
        #expect(seeded.status == 409)
        #expect(try JSONParser.parse(try await b.send(.get, "/todos/1").body)["title"]?.stringValue == "seeded")
        try await Self.stop([(first, a), (second, b)])
    }

    @Test("DELETE /__kakapo/store resets every process's view: seeds back, ids from 0 again")
    func reset() async throws {
        let (_, _, (first, a), (second, b)) = try await Self.twoReplicas()
        for _ in 0..<3 { _ = try await a.send(.post, "/todos", body: Self.json(#"{"title":"x"}"#)) }
        let snapshot = try JSONParser.parse(try await b.send(.get, "/__kakapo/store").body)
        let shared = snapshot["stores"]?.arrayValue?.last
        #expect(shared?["entities"]?["todos"]?.arrayValue?.count == 4)
        #expect(shared?["nextId"] == 4, "0, 2 and 3 given out; 1 skipped, the seed has it")
        #expect(shared?["store"]?.stringValue?.hasPrefix("postgres://kakapo@127.0.0.1:") == true)
        #expect(shared?["store"]?.stringValue?.contains("kakapo-test") == false, "the password reached the snapshot")

        let reset = try await b.send(.delete, "/__kakapo/store")
        #expect(reset.status == 200, "\(reset.text)")
        #expect(try await a.send(.get, "/todos").text == #"[{"id":1,"title":"seeded","done":false}]"#)
        let again = try await a.send(.post, "/todos", body: Self.json(#"{"title":"after"}"#))
        #expect(again.text == #"{"title":"after","id":"0"}"#)
        try await Self.stop([(first, a), (second, b)])
    }

    @Test("a database stopped mid-run answers 503 with a JSON reason, and the store works again once it is back")
    func outage() async throws {
        let database = try await TestDatabase.fresh()
        let routes = try Self.routesFile()
        let (process, client) = try await Self.replica(database, routes: routes)
        #expect(try await client.send(.get, "/todos").status == 200)
        try await TestDatabase.server("stop")
        do {
            let started = ContinuousClock.now
            let down = try await client.send(.get, "/todos")
            #expect(down.status == 503)
            #expect(
                try JSONParser.parse(down.body)["error"]?.stringValue?.hasPrefix("the shared store is unavailable: ")
                    == true, "\(down.text)")
            #expect(ContinuousClock.now - started < .seconds(20))
            // Routes, the admin API and everything else still answer.
            #expect(try await client.send(.get, "/__kakapo/health").status == 200)
        } catch {
            try await TestDatabase.server("start")
            throw error
        }
        try await TestDatabase.server("start")
        var status = 0
        for _ in 0..<40 where status != 200 {
            status = try await client.send(.get, "/todos").status
            if status != 200 { try await Task.sleep(for: .milliseconds(250)) }
        }
        #expect(status == 200)
        let created = try await client.send(.post, "/todos", body: Self.json(#"{"title":"after the outage"}"#))
        #expect(created.status == 201)
        try await Self.stop([(process, client)])
    }

    @Test("bad URLs and credentials are clear errors at start")
    func badURLs() async throws {
        let routes = try Self.routesFile()
        let malformed = try await KakapoProcess.run(["serve", "--routes", routes, "--store", "mysql://x@y/z"])
        #expect(malformed.status == 2)
        #expect(malformed.error.contains("--store: mysql://x@y/z is not a postgres:// URL"), "\(malformed.error)")
        let noDatabase = try await KakapoProcess.run(["serve", "--routes", routes, "--store", "postgres://u@h:5432"])
        #expect(noDatabase.status == 2)
        #expect(noDatabase.error.contains("names no database"), "\(noDatabase.error)")

        let server = try PostgresURL(try #require(TestDatabase.url))
        let wrong = "postgres://\(server.user):not-the-password@\(server.host):\(server.port)/\(server.database)"
        let refused = try await KakapoProcess.run(["serve", "--routes", routes, "--store", wrong, "--port", "0"])
        #expect(refused.status == 3)
        #expect(refused.error.contains("password authentication failed"), "\(refused.error)")
        #expect(!refused.error.contains("not-the-password"), "the password reached the message")

        // KAKAPO_STORE_URL, given through env(1) (this test process's own environment is shared).
        let fromEnvironment = try KakapoProcess(
            ["KAKAPO_STORE_URL=\(wrong)", KakapoProcess.binary, "serve", "--routes", routes, "--port", "0"],
            executable: "/usr/bin/env")
        #expect(try await fromEnvironment.waitForExit() == 3)
        #expect(
            fromEnvironment.standardError.contains("error: KAKAPO_STORE_URL: cannot connect to postgres://kakapo@"),
            "\(fromEnvironment.standardError)")

        let closedPort = try await KakapoProcess.run([
            "serve", "--routes", routes, "--store", "postgres://kakapo@127.0.0.1:1/postgres", "--port", "0",
        ])
        #expect(closedPort.status == 3)
        #expect(
            closedPort.error.contains("error: --store: cannot connect to postgres://kakapo@127.0.0.1:1/postgres"),
            "\(closedPort.error)")
    }

    private struct Account: Storable, Codable {
        let id: String
        let name: String
        init(id: String, store: Store) {
            self.id = id
            self.name = "Account \(id)"
        }
    }

    @Test("Swift resources (resources.add) keep their entities in the shared store, bodies decoded as their type")
    func typedResources() async throws {
        let shared = try await PostgresDocumentStore.connect(try PostgresURL(try await TestDatabase.fresh()))
        defer { shared.shutdown() }
        var configuration = ProxyConfiguration(port: 0)
        configuration.sharedStore = shared
        let server = try ProxyServer(configuration: configuration)
        server.resources.add(Account.self, at: "/accounts", in: Store())
        let client = try TestClient(port: try await server.start())
        let created = try await client.send(.post, "/accounts", body: Self.json(#"{"name":"Ada","id":"ignored"}"#))
        #expect(created.status == 201, "\(created.text)")
        #expect(created.text == #"{"name":"Ada","id":"0"}"#)
        #expect(try await client.send(.get, "/accounts/0").text == #"{"name":"Ada","id":"0"}"#)
        let invalid = try await client.send(.post, "/accounts", body: Self.json(#"{"name":7}"#))
        #expect(invalid.status == 400)
        let badPatch = try await client.send(.patch, "/accounts/0", body: Self.json(#"{"name":false}"#))
        #expect(badPatch.status == 400)
        #expect(try await client.send(.get, "/accounts/0").text == #"{"name":"Ada","id":"0"}"#)
        let snapshot = try await shared.snapshot()
        #expect(snapshot["entities"]?["Account"]?.arrayValue?.count == 1)
        client.shutdown()
        _ = await server.shutdown()
    }
}
