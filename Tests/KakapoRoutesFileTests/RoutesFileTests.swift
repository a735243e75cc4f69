import Foundation
import KakapoJSON
import KakapoRoutesFile
import KakapoStubs
import KakapoTestSupport
import Testing

/// Reading routes files: what loads, and the exact message for every kind of invalid file.
@Suite("Routes files")
struct RoutesFileTests {
    /// Writes `text` to a file named `name` in a fresh folder and returns its path.
    static func write(_ text: String, name: String = "routes.json") throws -> String {
        let path = try Fixtures.temporaryDirectory() + "/" + name
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// The message loading `text` fails with, the file's folder replaced by `DIR`.
    static func failure(_ text: String, name: String = "routes.json") throws -> String {
        let path = try write(text, name: name)
        do {
            _ = try RoutesFile.load(path)
        } catch {
            let directory = URL(fileURLWithPath: path).deletingLastPathComponent().path
            return error.description.replacingOccurrences(of: directory + "/", with: "")
        }
        Issue.record("\(name) loaded although it is invalid")
        return ""
    }

    @Test("a valid JSON file gives its routes and resources, in order")
    func loadsJSON() throws {
        let path = try Self.write(
            #"""
            {"routes": [
               {"method": "GET", "path": "/users/:id", "response": {"json": {"id": "{{params.id}}"}}},
               {"id": "named", "path": "/any", "responses": [{"text": "a"}, {"status": 204}], "cycle": true,
                "latency": {"uniform": ["1ms", "2ms"]}, "fault": {"status": 503, "rate": 0.5}}
             ],
             "resources": [{"path": "/todos", "seed": [{"id": 1}], "idField": "id"}]}
            """#)
        let definition = try RoutesFile.load(path)
        #expect(definition.routes.map(\.id) == ["routes.json#0", "named"])
        #expect(definition.resources.map(\.path) == ["/todos"])
        #expect(definition.resources[0].seed == .documents([["id": 1]]))
    }

    @Test("a YAML file means the same as the JSON file, with typed scalars")
    func loadsYAML() throws {
        let path = try Self.write(
            """
            routes:
              - method: POST
                path: /orders
                when:
                  json:
                    /express: true
                response:
                  status: 201
                  headers: {X-Count: 3}
                  json: {ok: true, total: 12.5, note: null, code: "007"}
            resources:
              - path: /todos
                seed: [{id: 1, title: first}]
            """, name: "routes.yaml")
        let definition = try RoutesFile.load(path)
        #expect(definition.routes.count == 1)
        #expect(
            definition.routes[0].definition["response"]?["json"]
                == ["ok": true, "total": .number(JSONNumber(12.5)), "note": nil, "code": "007"])
        #expect(definition.routes[0].definition["response"]?["headers"] == ["X-Count": 3])
        #expect(definition.resources[0].seed == .documents([["id": 1, "title": "first"]]))
    }

    @Test("an invalid status names the file, line, column and key path")
    func invalidStatus() throws {
        let message = try Self.failure(
            """
            {"routes": [
              {"path": "/a", "response": {"text": "ok"}},
              {"path": "/b", "response": {"text": "ok"}},
              {"path": "/c", "response": {"status": 700}}
            ]}
            """)
        #expect(message == "routes.json:4:41: routes[2].response.status: expected an integer from 100 to 599")
    }

    @Test("the same mistake in YAML points at the YAML line")
    func invalidStatusYAML() throws {
        let message = try Self.failure(
            """
            routes:
              - path: /a
                response:
                  status: "200"
            """, name: "routes.yml")
        #expect(message == "routes.yml:4:15: routes[0].response.status: expected an integer from 100 to 599")
    }

    @Test(
        "every invalid route names what is wrong",
        arguments: [
            (#"{"routes": [{"path": "/a", "reponse": {}}]}"#, "routes[0].reponse: unknown key; expected one of id"),
            (#"{"routes": [{"response": {}}]}"#, "routes[0]: a route needs a \"path\""),
            (#"{"routes": [{"path": "/a"}]}"#, "routes[0]: a route needs one of response, responses"),
            (
                #"{"routes": [{"path": "/a", "response": {}, "responses": []}]}"#,
                "routes[0]: a route takes only one of response, responses"
            ),
            (#"{"routes": [{"path": "/a", "responses": []}]}"#, "routes[0].responses: expected at least one response"),
            (#"{"routes": [{"path": "/a/**/b", "response": {}}]}"#, "routes[0].path: invalid route pattern"),
            (
                #"{"routes": [{"path": "/a", "method": "G T", "response": {}}]}"#,
                "routes[0].method: expected an HTTP method"
            ),
            (#"{"routes": [{"path": "/a", "host": "ftp://x", "response": {}}]}"#, "routes[0].host: invalid base URL"),
            (
                #"{"routes": [{"path": "/a", "response": {"json": 1, "text": "x"}}]}"#,
                "routes[0].response: a response takes one body, not json and text"
            ),
            (
                #"{"routes": [{"path": "/a", "response": {"base64": "@@@"}}]}"#,
                "routes[0].response.base64: not valid base64"
            ),
            (
                #"{"routes": [{"path": "/a", "response": {"file": "missing.bin"}}]}"#,
                "routes[0].response.file: cannot read the file"
            ),
            (
                #"{"routes": [{"path": "/a", "response": {"json": {"x": "{{param.id}}"}}}]}"#,
                "routes[0].response.json: unknown template tag {{param.id}}"
            ),
            (
                #"{"routes": [{"method": "GET", "path": "/a/:id", "response": {"json": {"x": "{{params.nope}}"}}}]}"#,
                "routes[0].response.json: {{params.nope}}: route GET /a/:id has parameters: id"
            ),
            (
                #"{"routes": [{"path": "/a", "response": {"headers": {"X": "{{params.id}}"}}}]}"#,
                "routes[0].response.headers.X: {{params.id}}: route ANY /a has no parameters"
            ),
            (
                #"{"routes": [{"path": "/a/:x/:y", "responses": [{}, {"text": "{{params.**}}"}]}]}"#,
                "routes[0].responses[1].text: {{params.**}}: route ANY /a/:x/:y has parameters: x, y"
            ),
            (
                #"{"routes": [{"path": "/a", "response": {"text": "{{body.a..b}}"}}]}"#,
                "routes[0].response.text: unknown template tag {{body.a..b}}"
            ),
            (
                #"{"routes": [{"path": "/a", "response": {"headers": {"X": "{{nope}}"}}}]}"#,
                "routes[0].response.headers.X: unknown template tag {{nope}}"
            ),
            (
                #"{"routes": [{"path": "/a", "latency": "fast", "response": {}}]}"#,
                "routes[0].latency: expected a duration"
            ),
            (
                #"{"routes": [{"path": "/a", "latency": {"uniform": ["3ms", "1ms"]}, "response": {}}]}"#,
                "routes[0].latency.uniform: the first duration must not exceed the second"
            ),
            (
                #"{"routes": [{"path": "/a", "latency": {"lognormal": {"median": "1ms"}}, "response": {}}]}"#,
                "routes[0].latency.lognormal: needs \"median\""
            ),
            (
                #"{"routes": [{"path": "/a", "fault": "boom", "response": {}}]}"#,
                "routes[0].fault: unknown fault \"boom\""
            ),
            (
                #"{"routes": [{"path": "/a", "fault": {"status": 503, "rate": 2}, "response": {}}]}"#,
                "routes[0].fault.rate: expected a number from 0 to 1"
            ),
            (
                #"{"routes": [{"path": "/a", "when": {"query": {"q": {"matches": "("}}}, "response": {}}]}"#,
                "routes[0].when.query.q.matches: not a valid regular expression"
            ),
            (
                #"{"routes": [{"path": "/a", "when": {"json": {"user": 1}}, "response": {}}]}"#,
                "routes[0].when.json.user: a JSON pointer starts with '/'"
            ),
            (
                #"{"routes": [{"path": "/a", "when": {"cookies": {}}, "response": {}}]}"#,
                "routes[0].when.cookies: unknown key"
            ),
            (
                #"{"routes": [{"id": "x", "path": "/a", "response": {}}, {"id": "x", "path": "/b", "response": {}}]}"#,
                "routes[1].id: the id \"x\" is used twice"
            ),
            (#"{"resources": [{"path": "/todos/:id"}]}"#, "resources[0].path: a resource path is a plain path"),
            (#"{"resources": [{"path": "/t", "seed": 3}]}"#, "resources[0].seed: expected an object, found a number"),
            (#"{"resources": [{"path": "/t", "seed": [1]}]}"#, "resources[0].seed: element 0 of the seed is a number"),
            (
                #"{"resources": [{"path": "/t", "seed": {"cassette": "/t"}}]}"#,
                "resources[0].seed.cassette: expected a recorded request"
            ),
            (#"{"resources": [{"path": "/t"}, {"path": "t"}]}"#, "resources[1]: the resource /t is declared twice"),
            (#"{"routes": {}}"#, "routes: expected an array, found an object"),
            (#"[]"#, "expected an object, found an array"),
        ])
    func invalidRoutes(file: String, expected: String) throws {
        let message = try Self.failure(file)
        #expect(message.hasPrefix("routes.json:1:"), "\(message)")
        #expect(message.contains(": " + expected), "\(message)")
    }

    @Test("a JSON syntax error and a YAML syntax error give their line and column")
    func syntaxErrors() throws {
        #expect(try Self.failure("{\"routes\": [\n  {\"path\": \"/a\",}\n]}").hasPrefix("routes.json:2:"))
        let yaml = try Self.failure("routes:\n  - path: [unclosed\n", name: "routes.yaml")
        #expect(yaml.hasPrefix("routes.yaml:2:11:"), "\(yaml)")
        #expect(yaml.contains("invalid YAML"))
        let duplicate = try Self.failure("routes: []\nroutes: []\n", name: "routes.yaml")
        #expect(duplicate == "routes.yaml:1:1: the key \"routes\" appears twice", "\(duplicate)")
    }

    @Test("a missing file says so")
    func missingFile() {
        #expect(throws: RoutesError.self) { try RoutesFile.load("/nonexistent/routes.json") }
        do {
            _ = try RoutesFile.load("/nonexistent/routes.json")
        } catch {
            #expect(error.description == "/nonexistent/routes.json: no such file")
        }
    }

    @Test("a seed file and a body file are read relative to the routes file")
    func relativeFiles() throws {
        let path = try Self.write(
            #"{"routes": [{"path": "/logo", "response": {"file": "logo.bin"}}], "resources": [{"path": "/t", "seed": "seed.json"}]}"#
        )
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent().path
        try Data([1, 2, 3]).write(to: URL(fileURLWithPath: directory + "/logo.bin"))
        try #"[{"id": "a"}]"#.write(toFile: directory + "/seed.json", atomically: true, encoding: .utf8)
        let definition = try RoutesFile.load(path)
        #expect(definition.resources[0].seed == .documents([["id": "a"]]))
        try #"[{"id": "a"},]"#.write(toFile: directory + "/seed.json", atomically: true, encoding: .utf8)
        do {
            _ = try RoutesFile.load(path)
            Issue.record("a seed file with a syntax error loaded")
        } catch {
            #expect(error.description.contains("resources[0].seed: seed.json:1:"), "\(error)")
        }
    }
}
