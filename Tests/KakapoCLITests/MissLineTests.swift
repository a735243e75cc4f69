import Foundation
import Kakapo
import KakapoTestSupport
import Testing

/// Every miss says why where the user looks: one line in the log at the default level, the same line as
/// `error.message` in the body (what API SDKs show), in the summary with the GraphQL operation or JSON-RPC
/// method named.
@Suite("Command line: miss lines")
struct MissLineTests {
    static let python = CLITests.packageRoot + "/.build/python-venv/bin/python"
    static let json: HTTP.Headers = ["Content-Type": "application/json"]
    static let getUser = "query GetUser($id: ID!) { user(id: $id) { name } }"
    static let twoOperations = "query First($a: Int) { first(a: $a) } query Second($a: Int) { second(a: $a) }"

    static func graphQL(_ query: String, operationName: String? = nil, variables: String) -> String {
        let name = operationName.map { #","operationName":"\#($0)""# } ?? ""
        return #"{"query":"\#(query)"\#(name),"variables":\#(variables)}"#
    }

    static func jsonRPC(_ method: String, id: Int, params: String) -> String {
        #"{"jsonrpc":"2.0","id":\#(id),"method":"\#(method)","params":\#(params)}"#
    }

    /// Records `bodies` (each `POST target`) through `kakapo record` into a new cassette; returns its path.
    static func record(_ bodies: [(target: String, body: String)]) async throws -> String {
        let numbering = GraphQLTests.Numbering()
        let upstream = try await TestUpstream.start { numbering.reply($0) }
        let cassette = try Fixtures.temporaryDirectory() + "/misses.json"
        let process = try KakapoProcess([
            "record", "--upstream", upstream.baseURL, "--cassette", cassette, "--port", "0",
        ])
        let client = try TestClient(port: try await process.waitUntilListening())
        for (target, body) in bodies {
            let response = try await client.send(.post, target, headers: json, body: Array(body.utf8))
            #expect(response.status == 200, "\(response.text)")
        }
        client.shutdown()
        process.send(SIGINT)
        #expect(try await process.waitForExit() == 0, "\(process.standardError)")
        await upstream.stop()
        return cassette
    }

    /// The lines of the log (not the summary) that say a miss.
    static func loggedMisses(_ standardError: String) -> [Substring] {
        standardError.split(separator: "\n").filter { $0.contains("miss: ") && !$0.hasPrefix("  miss: ") }
    }

    /// What the OpenAI Python SDK does with an error answer (`_make_status_error_from_response`, then
    /// `APIStatusError`): `error.message` when `error` is an object, else only the status.
    static let sdkClient = #"""
        import json, sys, urllib.request, urllib.error
        request = urllib.request.Request(sys.argv[1], data=sys.argv[2].encode(),
                                         headers={"Content-Type": "application/json"})
        try:
            urllib.request.urlopen(request)
            print("no error")
        except urllib.error.HTTPError as answer:
            body = json.loads(answer.read())
            error = body.get("error", body)
            if isinstance(error, dict) and isinstance(error.get("message"), str):
                print(f"Error code: {answer.code} - {error['message']} ({error.get('type')}, {error.get('code')})")
            else:
                print(f"Error code: {answer.code}")
        """#

    @Test("a GraphQL miss logs one line at the default level and an SDK reading error.message shows it")
    func graphQLMissLine() async throws {
        let cassette = try await Self.record([
            ("/graphql", Self.graphQL(Self.getUser, variables: #"{"id":"1"}"#)),
            ("/graphql", Self.graphQL(Self.getUser, variables: #"{"id":"2"}"#)),
            ("/graphql", Self.graphQL("mutation AddUser { addUser { id } }", variables: "{}")),
            ("/rpc", Self.jsonRPC("tools/call", id: 1, params: #"{"name":"add","arguments":{"a":1}}"#)),
            ("/rpc", Self.jsonRPC("tools/list", id: 2, params: "{}")),
        ])
        let process = try KakapoProcess(["replay", "--cassette", cassette, "--port", "0"])
        let port = try await process.waitUntilListening()
        let client = try TestClient(port: port)
        let hit = try await client.send(
            .post, "/graphql", headers: Self.json,
            body: Array(Self.graphQL(Self.getUser, variables: #"{"id":"1"}"#).utf8))
        #expect(hit.status == 200)
        let miss = try await client.send(
            .post, "/graphql", headers: Self.json,
            body: Array(Self.graphQL(Self.getUser, variables: #"{"id":"7"}"#).utf8))
        #expect(miss.status == 404)
        let line = "POST /graphql query GetUser: variables /id: 7 here, 1 recorded (interaction 0"
        let report = try JSONParser.parse(miss.body)
        let message = try #require(report["error"]?["message"]?.stringValue, "\(miss.text)")
        #expect(message.contains(line), "\(message)")
        #expect(report["error"]?["type"]?.stringValue == "kakapo_miss")
        #expect(report["message"]?.stringValue == message)
        #expect(report["nearest"]?.arrayValue?.isEmpty == false, "the report is kept: \(miss.text)")
        let rpcMiss = try await client.send(
            .post, "/rpc", headers: Self.json,
            body: Array(Self.jsonRPC("tools/call", id: 1, params: #"{"name":"add","arguments":{"a":2}}"#).utf8))
        #expect(rpcMiss.status == 404)
        client.shutdown()

        // An SDK-shaped client shows the line, not just "Error code: 404".
        let sdk = try await KakapoProcess.run(
            [
                "-c", Self.sdkClient, "http://127.0.0.1:\(port)/graphql",
                Self.graphQL(Self.getUser, variables: #"{"id":"7"}"#),
            ],
            executable: Self.python)
        #expect(sdk.status == 0, "\(sdk.error)")
        #expect(sdk.output.contains("Error code: 404 - kakapo: no recording matches " + line), "\(sdk.output)")
        #expect(sdk.output.contains("(kakapo_miss, kakapo_miss)"), "\(sdk.output)")

        process.send(SIGINT)
        _ = try await process.waitForExit()
        let errors = process.standardError
        // At the default level, one line per miss, with the nearest recording and its first difference.
        let logged = Self.loggedMisses(errors)
        #expect(logged.count == 3, "\(errors)")
        #expect(logged.contains { $0.contains("miss: " + line) }, "\(errors)")
        #expect(
            logged.contains { $0.contains("miss: POST /rpc jsonrpc tools/call: ") && $0.contains("(interaction 3") },
            "\(errors)")
        // The summary names the operation and the method on every miss and unused line.
        #expect(errors.contains("\n  miss: " + line), "\(errors)")
        #expect(errors.contains("\n  miss: POST /rpc jsonrpc tools/call: "), "\(errors)")
        #expect(errors.contains("  unused: #1 POST /graphql query GetUser"), "\(errors)")
        #expect(errors.contains("  unused: #2 POST /graphql mutation AddUser"), "\(errors)")
        #expect(errors.contains("  unused: #4 POST /rpc jsonrpc tools/list"), "\(errors)")
    }

    @Test("a flood of 600 misses logs a bounded number of lines, and says how many it held back")
    func flood() async throws {
        let cassette = try await Self.record([("/graphql", Self.graphQL(Self.getUser, variables: #"{"id":"1"}"#))])
        let process = try KakapoProcess(["replay", "--cassette", cassette, "--port", "0"])
        let port = try await process.waitUntilListening()
        let flood = #"""
            import http.client, sys, time
            connection = http.client.HTTPConnection("127.0.0.1", int(sys.argv[1]))
            statuses = set()
            for number in range(600):
                body = '{"query":"query GetUser($id: ID!) { user(id: $id) { name } }","variables":{"id":"%d"}}' % (number + 2)
                connection.request("POST", "/graphql", body, {"Content-Type": "application/json"})
                response = connection.getresponse()
                response.read()
                statuses.add(response.status)
                time.sleep(0.005)  # 3 s at least, so the limit refills and says what it held back
            print(sorted(statuses))
            """#
        let started = ContinuousClock.now
        // About 4 s with the debug build on an idle machine; the bound guards against a hang.
        let sent = try await KakapoProcess.run(
            ["-c", flood, String(port)], executable: Self.python, timeout: .seconds(120))
        let elapsed = ContinuousClock.now - started
        #expect(sent.output.contains("[404]"), "\(sent.output) \(sent.error)")
        process.send(SIGINT)
        // Generous: only a guard against a hang (the suite runs 8 tests at a time on 2 cores).
        _ = try await process.waitForExit(timeout: .seconds(120))
        let errors = process.standardError
        let logged = Self.loggedMisses(errors)
        // A burst in full, then at most one line a second (with the count of those held back).
        let seconds = Int(elapsed.components.seconds) + 2
        #expect(logged.count >= 10 && logged.count <= 10 + seconds, "\(logged.count) lines in \(elapsed)")
        let heldBack = errors.split(separator: "\n").filter { $0.contains("more misses not logged") }
        #expect(!heldBack.isEmpty && heldBack.count <= seconds, "\(heldBack.count) lines in \(elapsed)")
        #expect(errors.split(separator: "\n").count < 200, "\(errors.split(separator: "\n").count) lines")
        #expect(errors.contains("... and 550 more misses"), "the summary counts them all")
    }

    @Test("a document of two operations sent for one is compared with its recording for the other")
    func otherOperationOfTheDocument() async throws {
        let cassette = try await Self.record([
            ("/graphql", Self.graphQL("query Other { other }", variables: "{}")),
            ("/graphql", Self.graphQL("query First($a: Int) { first(a: $a) }", variables: #"{"a":1}"#)),
            ("/graphql", Self.graphQL("query First($a: Int) { first(a: $a) }", variables: #"{"a":2}"#)),
            ("/graphql", Self.graphQL(Self.twoOperations, operationName: "Second", variables: #"{"a":3}"#)),
        ])
        let process = try KakapoProcess(["replay", "--cassette", cassette, "--port", "0"])
        let client = try TestClient(port: try await process.waitUntilListening())
        let miss = try await client.send(
            .post, "/graphql", headers: Self.json,
            body: Array(Self.graphQL(Self.twoOperations, operationName: "First", variables: #"{"a":3}"#).utf8))
        client.shutdown()
        process.send(SIGINT)
        _ = try await process.waitForExit()
        #expect(miss.status == 404)
        let report = try JSONParser.parse(miss.body)
        let nearest = report["nearest"]?.arrayValue ?? []
        let same = try #require(
            nearest.first { $0["interaction"]?.numberValue?.intValue == 3 }, "not among the nearest: \(miss.text)")
        let differences = same["differences"]?.arrayValue?.compactMap(\.stringValue) ?? []
        #expect(differences == ["operationName: First here, Second recorded"], "\(differences)")
    }
}
