import Foundation
import Kakapo
import KakapoTestSupport
import Synchronization
import Testing

/// GraphQL through the built binary: every operation goes to `POST /graphql` (or `GET /graphql?query=`),
/// and each must get its own recording back.
@Suite("Command line: GraphQL")
struct GraphQLTests {
    /// Answers every request with its sequence number, so a replay shows which recording answered.
    final class Numbering: Sendable {
        let next = Mutex(0)
        func reply(_ request: HTTP.Request) -> TestUpstream.Reply {
            let number = next.withLock {
                $0 += 1
                return $0
            }
            return .response(
                HTTP.Response(
                    status: 200, headers: ["Content-Type": "application/json"],
                    body: Array(#"{"data":{"answer":\#(number)}}"#.utf8)))
        }
    }

    static let json: HTTP.Headers = ["Content-Type": "application/json"]

    static func post(_ client: TestClient, _ body: String, headers: HTTP.Headers = json, target: String = "/graphql")
        async throws -> HTTP.Response
    {
        try await client.send(.post, target, headers: headers, body: Array(body.utf8))
    }

    /// The requests recorded, and the same operations written otherwise (whitespace, commas, comments, key
    /// order), which must replay the same answers.
    static let recorded: [(method: HTTP.Method, target: String, headers: HTTP.Headers, body: String)] = [
        (
            .post, "/graphql", json,
            #"{"query":"query GetUser($id: ID!) { user(id: $id) { name email } }","variables":{"id":"1"}}"#
        ),
        (
            .post, "/graphql", json,
            #"{"query":"query GetUser($id: ID!) { user(id: $id) { name email } }","variables":{"id":"2"}}"#
        ),
        (.post, "/graphql", json, #"{"query":"query GetUsers { users { id name } }"}"#),
        (
            .post, "/graphql", json,
            #"{"query":"mutation CreateUser($name: String!) { createUser(name: $name) { id } }","operationName":"CreateUser","variables":{"name":"Ada"}}"#
        ),
        (
            .post, "/graphql", json,
            #"[{"query":"query GetUsers { users { id name } }"},{"query":"mutation Ping { ping }"}]"#
        ),
        (.get, "/graphql?query=%7B%20me%20%7B%20id%20%7D%20%7D", [:], ""),
        (
            .post, "/graphql?operationName=Viewer", ["Content-Type": "application/graphql"],
            "query Viewer { viewer { id } }"
        ),
    ]
    static let rewritten: [(method: HTTP.Method, target: String, headers: HTTP.Headers, body: String)] = [
        (
            .post, "/graphql", json,
            ##"{"variables": {"id": "1"}, "query": "# the user\nquery GetUser(\n  $id: ID!\n) {\n  user(id: $id) {\n    name,\n    email\n  }\n}"}"##
        ),
        (
            .post, "/graphql", json,
            #"{"query":"query GetUser($id:ID!){user(id:$id){name email}}","variables":{"id":"2"}}"#
        ),
        (.post, "/graphql", json, #"{"query":"query GetUsers {\n  users { id, name }\n}","variables":null}"#),
        (
            .post, "/graphql", json,
            #"{"operationName":"CreateUser","variables":{"name":"Ada"},"query":"mutation CreateUser($name: String!) {\n  createUser(name: $name) { id }\n}"}"#
        ),
        (
            .post, "/graphql", json,
            #"[{"query":"query GetUsers{users{id,name}}"},{"query":"mutation Ping {\n ping\n}"}]"#
        ),
        (.get, "/graphql?query=%7Bme%7Bid%7D%7D", [:], ""),
        (
            .post, "/graphql?operationName=Viewer", ["Content-Type": "application/graphql"],
            "query Viewer {\n  viewer {\n    id\n  }\n}\n"
        ),
    ]

    static func send(
        _ client: TestClient, _ request: (method: HTTP.Method, target: String, headers: HTTP.Headers, body: String)
    ) async throws -> HTTP.Response {
        try await client.send(request.method, request.target, headers: request.headers, body: Array(request.body.utf8))
    }

    /// Records `recorded` through `kakapo record` into a new cassette and returns its path and the answers.
    static func record() async throws -> (cassette: String, answers: [String]) {
        let numbering = Numbering()
        let upstream = try await TestUpstream.start { numbering.reply($0) }
        let cassette = try Fixtures.temporaryDirectory() + "/graphql.json"
        let process = try KakapoProcess([
            "record", "--upstream", upstream.baseURL, "--cassette", cassette, "--port", "0",
        ])
        let client = try TestClient(port: try await process.waitUntilListening())
        var answers: [String] = []
        for request in recorded { answers.append(try await send(client, request).text) }
        client.shutdown()
        process.send(SIGINT)
        #expect(try await process.waitForExit() == 0, "\(process.standardError)")
        await upstream.stop()
        #expect(Set(answers).count == recorded.count, "each recording got its own answer: \(answers)")
        return (cassette, answers)
    }

    @Test("several operations on one URL record and replay each its own answer, whatever the layout")
    func recordAndReplay() async throws {
        let (cassette, answers) = try await Self.record()
        let process = try KakapoProcess(["replay", "--cassette", cassette, "--port", "0"])
        let client = try TestClient(port: try await process.waitUntilListening())
        for (index, request) in Self.rewritten.enumerated() {
            let response = try await Self.send(client, request)
            #expect(response.status == 200, "\(request.body): \(response.text)")
            #expect(response.text == answers[index], "\(request.target) \(request.body)")
        }

        // Misses name the operation and what differs.
        let otherID = try await Self.post(
            client, #"{"query":"query GetUser($id: ID!) { user(id: $id) { name email } }","variables":{"id":"7"}}"#)
        #expect(otherID.status == 404)
        #expect(otherID.text.contains("variables /id: 7 here, 1 recorded"), "\(otherID.text)")
        let otherOperation = try await Self.post(client, #"{"query":"query GetPeople { users { id name } }"}"#)
        #expect(otherOperation.text.contains("operation: GetPeople here, GetUsers recorded"), "\(otherOperation.text)")
        let otherQuery = try await Self.post(
            client,
            #"{"query":"query GetUser($id: ID!) {\n  user(id: $id) {\n    name\n    phone\n  }\n}","variables":{"id":"1"}}"#
        )
        #expect(otherQuery.text.contains("query: differs at line 4 column 5"), "\(otherQuery.text)")
        // The nearest recordings of a miss are those of its own operation.
        let report = try JSONParser.parse(otherQuery.body)
        let nearest = report["nearest"]?.arrayValue?.compactMap { $0["interaction"]?.numberValue?.intValue } ?? []
        #expect(Set(nearest.prefix(2)) == [0, 1], "\(otherQuery.text)")
        client.shutdown()
        process.send(SIGINT)
        _ = try await process.waitForExit()

        let shown = try await KakapoProcess.run(["cassette", "show", cassette])
        let lines = shown.output.split(separator: "\n").map(String.init)
        #expect(lines.count == Self.recorded.count)
        #expect(lines.first?.hasPrefix("#0\tPOST\t/graphql  query GetUser\t200\t") == true, "\(shown.output)")
        #expect(lines.contains { $0.hasPrefix("#3\tPOST\t/graphql  mutation CreateUser\t") }, "\(shown.output)")
        #expect(lines.contains { $0.hasPrefix("#4\tPOST\t/graphql  batch: query GetUsers, mutation Ping\t") })
        #expect(lines.contains { $0.contains("?query=%7B%20me%20%7B%20id%20%7D%20%7D  query (anonymous)\t") })
        #expect(lines.contains { $0.hasPrefix("#6\tPOST\t/graphql?operationName=Viewer  query Viewer\t") })
    }

    @Test("--ignore-body-field /variables/x leaves a variable out of matching, in each operation of a batch")
    func ignoredVariable() async throws {
        let (cassette, answers) = try await Self.record()
        let process = try KakapoProcess([
            "replay", "--cassette", cassette, "--port", "0", "--ignore-body-field", "/variables/name",
        ])
        let client = try TestClient(port: try await process.waitUntilListening())
        let response = try await Self.post(
            client,
            #"{"query":"mutation CreateUser($name: String!) {\n  createUser(name: $name) { id }\n}","operationName":"CreateUser","variables":{"name":"Grace"}}"#
        )
        #expect(response.text == answers[3])
        // In a batch, the pointer applies to each operation.
        let batch = try await Self.post(
            client,
            #"[{"query":"query GetUsers { users { id name } }","variables":{"name":"x"}},{"query":"mutation Ping { ping }"}]"#
        )
        #expect(batch.text == answers[4], "\(batch.text)")
        client.shutdown()
        process.send(SIGINT)
        _ = try await process.waitForExit()
    }

    @Test("with --no-match-body a GET's query parameter still tells operations apart")
    func getWithoutBodyMatching() async throws {
        let (cassette, answers) = try await Self.record()
        let process = try KakapoProcess(["replay", "--cassette", cassette, "--port", "0", "--no-match-body"])
        let client = try TestClient(port: try await process.waitUntilListening())
        #expect(try await client.send(.get, "/graphql?query=%7B%20me%20%7B%20id%20%7D%20%7D").text == answers[5])
        #expect(try await client.send(.get, "/graphql?query=%7B%20users%20%7B%20id%20%7D%20%7D").status == 404)
        client.shutdown()
        process.send(SIGINT)
        _ = try await process.waitForExit()
    }

    @Test("a routes file answers by operation name and variables, exact, matches and present")
    func routesCondition() async throws {
        let directory = try Fixtures.temporaryDirectory()
        let routes = directory + "/graphql.routes.yaml"
        try """
        routes:
          - method: POST
            path: /graphql
            when: {graphql: {operationName: GetUser, variables: {"/id": "1"}}}
            response: {json: {data: {route: exact}}}
          - method: POST
            path: /graphql
            when: {graphql: {operationName: {matches: "Get.*"}, variables: {"/id": {present: true}}}}
            response: {json: {data: {route: matches}}}
          - path: /graphql
            when: {graphql: {query: "{ me { id } }"}}
            response: {json: {data: {route: query}}}

        """.write(toFile: routes, atomically: true, encoding: .utf8)
        let cassette = directory + "/empty.json"
        try CassetteFile.save(Cassette(interactions: []), to: cassette)
        let process = try KakapoProcess(["replay", "--cassette", cassette, "--routes", routes, "--port", "0"])
        let client = try TestClient(port: try await process.waitUntilListening())
        let query = "query GetUser($id: ID!) { user(id: $id) { name } }"
        let one = try await Self.post(client, #"{"query":"\#(query)","variables":{"id":"1"}}"#)
        #expect(one.text == #"{"data":{"route":"exact"}}"#)
        let two = try await Self.post(client, #"{"query":"\#(query)","variables":{"id":"2"}}"#)
        #expect(two.text == #"{"data":{"route":"matches"}}"#)
        let none = try await Self.post(client, #"{"query":"query GetUser { me { id } }"}"#)
        #expect(none.status == 404, "no id: neither route")
        let get = try await client.send(.get, "/graphql?query=%7B%0A%20%20me%20%7B%20id%20%7D%0A%7D")
        #expect(get.text == #"{"data":{"route":"query"}}"#)
        client.shutdown()
        process.send(SIGINT)
        _ = try await process.waitForExit()
    }

    @Test("routes lint reports bad graphql conditions with line and column")
    func lint() async throws {
        let file = try Fixtures.temporaryDirectory() + "/bad.routes.yaml"
        try """
        routes:
          - path: /graphql
            when: {graphql: {operationNme: GetUser}}
            response: {status: 204}
          - path: /graphql
            when: {graphql: {variables: {id: "1"}}}
            response: {status: 204}
          - path: /graphql
            when: {graphql: {query: "red shoes"}}
            response: {status: 204}

        """.write(toFile: file, atomically: true, encoding: .utf8)
        let result = try await KakapoProcess.run(["routes", "lint", file])
        #expect(result.status == 3)
        let lines = result.error.split(separator: "\n").map(String.init)
        #expect(
            lines.contains { $0.hasPrefix("\(file):3:36: routes[0].when.graphql.operationNme: unknown key") },
            "\(lines)")
        #expect(
            lines.contains { $0.hasPrefix("\(file):6:38: routes[1].when.graphql.variables.id: a JSON pointer") },
            "\(lines)")
        #expect(
            lines.contains { $0.hasPrefix("\(file):9:29: routes[2].when.graphql.query: expected a GraphQL document") },
            "\(lines)")
    }
}
