import Foundation
import Kakapo
import KakapoTestSupport
import Testing

/// `--routes` and `kakapo routes lint`, run as a user runs them.
@Suite("Command line: routes files")
struct RoutesCLITests {
    static let exampleRoutes = CLITests.packageRoot + "/Examples/routes/demo.routes.yaml"

    @Test("the example routes file overrides two demo endpoints and serves a resource in front of the cassette")
    func exampleRoutes() async throws {
        let process = try KakapoProcess([
            "replay", "--cassette", CLITests.demoCassette, "--routes", Self.exampleRoutes, "--port", "0",
        ])
        let client = try TestClient(port: try await process.waitUntilListening())
        let created = try await client.send(
            .post, "/users", headers: ["Content-Type": "application/json"],
            body: Array(#"{"name": "Katherine Johnson", "email": "kj@example.com", "admin": false}"#.utf8))
        #expect(created.status == 201)
        #expect(created.headers["X-Kakapo-Source"] == "route")
        let user = try JSONParser.parse(created.body)
        #expect(user["name"] == "Katherine Johnson")
        #expect(user["admin"] == false)
        let recorded = try await client.send(.get, "/users/1")
        #expect(recorded.headers["X-Kakapo-Source"] == "cassette")
        #expect(recorded.text.contains("Ada Lovelace"))
        #expect(try await client.send(.get, "/users/1", headers: ["X-Scenario": "outage"]).status == 503)
        let todos = try await client.send(.get, "/todos?done=false")
        #expect(todos.headers["X-Kakapo-Source"] == "store")
        #expect(try JSONParser.parse(todos.body).arrayValue?.count == 2)
        client.shutdown()
        process.send(SIGINT)
        #expect(try await process.waitForExit() == 0)
        #expect(
            process.standardError.contains("kakapo: 4 requests (2 route, 1 store, 1 cassette)"),
            "\(process.standardError)")
    }

    @Test("the routes file the README shows is valid")
    func readmeSnippet() throws {
        let readme = try String(contentsOfFile: CLITests.packageRoot + "/README.md", encoding: .utf8)
        let start = try #require(readme.range(of: "```yaml\n"))
        let end = try #require(readme[start.upperBound...].range(of: "```"))
        let directory = try Fixtures.temporaryDirectory()
        try FileManager.default.createDirectory(atPath: directory + "/fixtures", withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            atPath: CLITests.packageRoot + "/Examples/routes/fixtures/todos.json",
            toPath: directory + "/fixtures/todos.json")
        try String(readme[start.upperBound..<end.lowerBound]).write(
            toFile: directory + "/routes.yaml", atomically: true, encoding: .utf8)
        let definition = try RoutesFile.load(directory + "/routes.yaml")
        #expect(definition.routes.count == 3)
        #expect(definition.resources.map(\.path) == ["/todos"])
    }

    @Test("an invalid routes file stops the start with exit 3, naming file, line, column and key path")
    func invalidAtStart() async throws {
        let directory = try Fixtures.temporaryDirectory()
        let file = directory + "/routes.json"
        try #"{"routes": [{"path": "/a", "response": {"status": "ok"}}]}"#.write(
            toFile: file, atomically: true, encoding: .utf8)
        let result = try await KakapoProcess.run(["serve", "--routes", file, "--port", "0"])
        #expect(result.status == 3)
        #expect(
            result.error.contains("\(file):1:51: routes[0].response.status: expected an integer from 100 to 599"),
            "\(result.error)")
        #expect(result.output.isEmpty)
    }

    @Test("routes lint checks files without serving: 0 when valid, 3 with the location when not")
    func lint() async throws {
        let valid = try await KakapoProcess.run(["routes", "lint", Self.exampleRoutes])
        #expect(valid.status == 0)
        #expect(valid.output.contains("demo.routes.yaml: 4 routes, 1 resource"))
        let file = try Fixtures.temporaryDirectory() + "/bad.yaml"
        try "routes:\n  - path: /a\n    latency: soon\n    response: {}\n".write(
            toFile: file, atomically: true, encoding: .utf8)
        let invalid = try await KakapoProcess.run(["routes", "lint", Self.exampleRoutes, file])
        #expect(invalid.status == 3)
        #expect(invalid.error.contains("\(file):3:14: routes[0].latency: expected a duration"), "\(invalid.error)")
        #expect(try await KakapoProcess.run(["routes", "lint"]).status == 2)
        #expect(try await KakapoProcess.run(["serve", "--port", "0"]).status == 2)
    }

    @Test("an edited routes file is reloaded; an invalid edit keeps the routes in force and logs why")
    func reload() async throws {
        let file = try Fixtures.temporaryDirectory() + "/routes.json"
        func write(_ text: String) throws { try text.write(toFile: file, atomically: true, encoding: .utf8) }
        func route(_ answer: String) -> String { #"{"routes": [{"path": "/v", "response": {"text": "\#(answer)"}}]}"# }
        try write(route("one"))
        let process = try KakapoProcess(["serve", "--routes", file, "--port", "0"])
        let client = try TestClient(port: try await process.waitUntilListening())
        #expect(try await client.send(.get, "/v").text == "one")

        // The watcher polls every 250 ms; the deadline only guards against a hang (a loaded CI machine has
        // taken more than 5 s).
        func waitFor(_ expected: String) async throws -> Bool {
            let deadline = ContinuousClock.now + .seconds(20)
            while ContinuousClock.now < deadline {
                if try await client.send(.get, "/v").text == expected { return true }
                try await Task.sleep(for: .milliseconds(50))
            }
            return false
        }
        try write(route("two"))
        #expect(try await waitFor("two"))
        try write(#"{"routes": [{"path": "/v", "response": {"status": 1000}}]}"#)
        let deadline = ContinuousClock.now + .seconds(20)
        while !process.standardError.contains("not reloaded") && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(
            process.standardError.contains("routes.json:1:51: routes[0].response.status"), "\(process.standardError)")
        #expect(try await client.send(.get, "/v").text == "two")
        try write(route("three"))
        #expect(try await waitFor("three"))
        client.shutdown()
        process.send(SIGTERM)
        #expect(try await process.waitForExit() == 0)
    }
}
