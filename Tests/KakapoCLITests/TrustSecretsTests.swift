import Foundation
import Kakapo
import KakapoTestSupport
import Synchronization
import Testing

/// Issue 25, "No secret reaches a cassette, a log or the journal": every credential the hostile-input
/// probe found in clear, sent through the built binary recording from a real local upstream.
@Suite("Trust: no secret reaches a cassette, a log or the journal")
struct TrustSecretsTests {
    /// A JWT, as an OpenID provider's id_token looks.
    static let jwt =
        "eyJhbGciOiJSUzI1NiIsImtpZCI6IjEifQ.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkFkYSJ9.c2lnbmF0dXJlLWJ5dGVzLWhlcmU"

    /// Request headers and query parameters that leaked, each with a secret value of its own.
    static let headerSecrets: [(String, String)] = [
        ("X-API-Token", "hdr-api-token-111"), ("Private-Token", "hdr-private-222"),
        ("X-Goog-Api-Key", "hdr-goog-key-333"), ("X-Auth-Key", "hdr-auth-key-444"),
        ("Api-Token", "hdr-api-tok-555"), ("X-Session-Token", "hdr-session-666"),
    ]
    static let querySecrets: [(String, String)] = [
        ("X-Amz-Signature", "0f1e2d3c4b5a69788796a5b4c3d2e1f0"), ("X-Amz-Credential", "qry-amz-cred-777"),
        ("X-Amz-Security-Token", "qry-amz-sectok-888"), ("refresh_token", "qry-refresh-999"),
        ("code", "qry-oauth-code-aaa"), ("auth", "qry-auth-bbb"), ("id_token", "qry-idtoken-ccc"),
        ("session", "qry-session-ddd"), ("passwd", "qry-passwd-eee"), ("private_token", "qry-privtok-fff"),
    ]
    static let formSecrets = ["refresh_token": "form-refresh-123", "client_assertion": "form-assertion-456"]
    static let jsonSecrets = ["password": "json-password-1", "token": "json-token-22", "apiKey": "json-apikey-333"]
    static let responseSecrets = [
        "resp-access-token-1", "resp-refresh-token-2", jwt, "resp-password-3", "resp-hdr-api-4", "resp-hdr-sess-5",
    ]

    static var allSecrets: [String] {
        headerSecrets.map(\.1) + querySecrets.map(\.1) + Array(formSecrets.values) + Array(jsonSecrets.values)
            + responseSecrets
    }

    /// An API that answers a token endpoint with credentials, and echoes anything else back (headers,
    /// target and body, in its JSON body), as echo services and error pages do.
    static func api() async throws -> TestUpstream {
        try await TestUpstream.start { request in
            if request.path == "/oauth/token" {
                var headers: HTTP.Headers = ["Content-Type": "application/json"]
                headers.add(name: "X-Api-Token", value: "resp-hdr-api-4")
                headers.add(name: "X-Session-Token", value: "resp-hdr-sess-5")
                let body =
                    #"{"access_token": "resp-access-token-1", "token_type": "Bearer", "expires_in": 3600, "refresh_token": "resp-refresh-token-2", "id_token": "\#(jwt)", "user": {"name": "Ada", "password": "resp-password-3"}}"#
                return .response(HTTP.Response(status: 200, headers: headers, body: Array(body.utf8)))
            }
            var echoed = JSONObject()
            for field in request.headers { echoed.append(key: field.name, value: .string(field.value)) }
            let body: JSONValue = [
                "url": .string(request.target), "headers": .object(echoed),
                "body": .string(String(decoding: request.body, as: UTF8.self)),
            ]
            return .response(
                HTTP.Response(
                    status: 200, headers: ["Content-Type": "application/json"],
                    body: JSONWriter(layout: .readable).write(body)))
        }
    }

    /// Sends every leaked credential, with `salt` in each value so a replay can send other ones.
    static func sendAll(_ client: TestClient, salt: String = "") async throws -> [HTTP.Response] {
        var answers: [HTTP.Response] = []
        answers.append(
            try await client.send(
                .get, "/me", headers: HTTP.Headers(headerSecrets.map { ($0.0, $0.1 + salt) })))
        let query = querySecrets.map { "\($0.0)=\($0.1)\(salt)" }.joined(separator: "&")
        answers.append(try await client.send(.get, "/files/report.pdf?page=2&" + query))
        let form = formSecrets.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)\(salt)" }.joined(separator: "&")
        // Echoed back by the API in its answer's body.
        answers.append(
            try await client.send(
                .post, "/register", headers: ["Content-Type": "application/x-www-form-urlencoded"],
                body: Array(("grant_type=refresh_token&" + form).utf8)))
        answers.append(
            try await client.send(
                .post, "/oauth/token", headers: ["Content-Type": "application/x-www-form-urlencoded"],
                body: Array("grant_type=client_credentials".utf8)))
        let json = jsonSecrets.sorted { $0.key < $1.key }.map { #""\#($0.key)": "\#($0.value)\#(salt)""# }
        answers.append(
            try await client.send(
                .post, "/login", headers: ["Content-Type": "application/json"],
                body: Array(("{\"user\": \"ada\", " + json.joined(separator: ", ") + "}").utf8)))
        return answers
    }

    @Test(
        "every leaked name of the issue is redacted in the cassette, the journal and --verbose; lint passes; replay with other secrets still hits"
    )
    func recordingRedactsEveryLeakedName() async throws {
        let upstream = try await Self.api()
        defer { Task { await upstream.stop() } }
        let cassette = try Fixtures.temporaryDirectory() + "/secrets.json"
        let recorder = try KakapoProcess([
            "record", "--upstream", upstream.baseURL, "--cassette", cassette, "--port", "0", "--verbose",
        ])
        let client = try TestClient(port: try await recorder.waitUntilListening())
        let answers = try await Self.sendAll(client)
        #expect(answers.allSatisfy { $0.status == 200 })
        #expect(answers[2].text.contains("form-assertion-456"), "the client gets the real answer")
        #expect(answers[3].text.contains("resp-access-token-1"))
        let journal = try await client.send(.get, "/__kakapo/requests").text
        client.shutdown()
        recorder.send(SIGINT)
        #expect(try await recorder.waitForExit() == 0)

        let file = try String(contentsOfFile: cassette, encoding: .utf8)
        for secret in Self.allSecrets {
            #expect(!file.contains(secret), "\(secret) reached the cassette")
            #expect(!journal.contains(secret), "\(secret) reached the journal")
            #expect(!recorder.standardError.contains(secret), "\(secret) reached the log")
        }
        #expect(journal.contains("X-Amz-Signature=[REDACTED]"), "\(journal)")
        #expect(file.contains(#""token_type": "Bearer""#) && file.contains(#""expires_in": 3600"#), "not secrets")
        #expect(file.contains("page=2"), "an ordinary parameter is kept")

        let lint = try await KakapoProcess.run(["cassette", "lint", cassette])
        #expect(lint.status == 0, "\(lint.output)\(lint.error)")

        let player = try KakapoProcess(["replay", "--cassette", cassette, "--port", "0", "--strict"])
        let replayClient = try TestClient(port: try await player.waitUntilListening())
        let replayed = try await Self.sendAll(replayClient, salt: "-other")
        replayClient.shutdown()
        player.send(SIGINT)
        #expect(try await player.waitForExit() == 0, "\(player.standardError)")
        for answer in replayed {
            #expect(
                answer.status == 200 && answer.headers["X-Kakapo-Source"] == "cassette",
                "\(answer.status) \(answer.text)")
        }
    }

    @Test("lint flags every leaked name in a cassette written without redaction, and redact cleans it")
    func lintFlagsUnredactedCassette() async throws {
        let path = try Fixtures.temporaryDirectory() + "/leaky.json"
        let query = Self.querySecrets.map { "\($0.0)=\($0.1)" }.joined(separator: "&")
        let tokenBody =
            #"{"access_token": "resp-access-token-1", "id_token": "\#(Self.jwt)", "user": {"password": "resp-password-3"}}"#
        let interactions: [Interaction] = [
            Interaction(
                request: HTTP.Request(method: .get, target: "/me", headers: HTTP.Headers(Self.headerSecrets)),
                response: HTTP.Response(status: 200, headers: ["X-Session-Token": "resp-hdr-sess-5"], body: []),
                recordedAt: "2026-11-22T00:00:00.000Z", durationMilliseconds: 1),
            Interaction(
                request: HTTP.Request(method: .get, target: "/x?" + query),
                response: HTTP.Response(status: 204, headers: [:], body: []),
                recordedAt: "2026-11-22T00:00:00.000Z", durationMilliseconds: 1),
            Interaction(
                request: HTTP.Request(
                    method: .post, target: "/oauth/token",
                    headers: ["Content-Type": "application/x-www-form-urlencoded"],
                    body: Array("refresh_token=form-refresh-123&client_assertion=form-assertion-456".utf8)),
                response: HTTP.Response(
                    status: 200, headers: ["Content-Type": "application/json"], body: Array(tokenBody.utf8)),
                recordedAt: "2026-11-22T00:00:00.000Z", durationMilliseconds: 1),
            Interaction(
                request: HTTP.Request(
                    method: .post, target: "/login", headers: ["Content-Type": "application/json"],
                    body: Array(#"{"password": "json-password-1", "apiKey": "json-apikey-333"}"#.utf8)),
                response: HTTP.Response(status: 204, headers: [:], body: []),
                recordedAt: "2026-11-22T00:00:00.000Z", durationMilliseconds: 1),
        ]
        try CassetteFile.save(Cassette(interactions: interactions), to: path)

        let lint = try await KakapoProcess.run(["cassette", "lint", path])
        #expect(lint.status == 1)
        #expect(!lint.output.contains("no credentials found"), "\(lint.output)")
        for name in Self.headerSecrets.map(\.0) {
            #expect(lint.error.contains("credential in request header \(name)"), "\(name): \(lint.error)")
        }
        #expect(lint.error.contains("credential in response header X-Session-Token"))
        #expect(lint.error.contains("credential in a query parameter"))
        #expect(lint.error.contains("credential in the request body"))
        #expect(lint.error.contains("credential in the response body at /access_token"), "\(lint.error)")

        let redacted = try await KakapoProcess.run(["cassette", "redact", path])
        #expect(redacted.status == 0, "\(redacted.error)")
        let text = try String(contentsOfFile: path, encoding: .utf8)
        for secret in Self.allSecrets where text.contains(secret) {
            Issue.record("\(secret) is still in the cassette after redact")
        }
        #expect(try await KakapoProcess.run(["cassette", "lint", path]).status == 0)
    }

    @Test("import-har applies the same rules: credential names and a JWT never reach the cassette")
    func harImport() async throws {
        let directory = try Fixtures.temporaryDirectory()
        let responseText = #"{\"access_token\": \"resp-access-token-1\", \"id_token\": \"\#(Self.jwt)\"}"#
        let har = #"""
            {"log": {"version": "1.2", "entries": [{
              "startedDateTime": "2026-11-20T10:00:00.100Z", "time": 12,
              "request": {"method": "GET", "url": "https://api.example.com/v1/me?X-Amz-Credential=qry-amz-cred-777&page=1",
                "headers": [{"name": "X-API-Token", "value": "hdr-api-token-111"}, {"name": "Private-Token", "value": "hdr-private-222"}]},
              "response": {"status": 200, "headers": [{"name": "Content-Type", "value": "application/json"}, {"name": "X-Session-Token", "value": "resp-hdr-sess-5"}],
                "content": {"mimeType": "application/json", "text": "\#(responseText)"}}
            }]}}
            """#
        try har.write(toFile: directory + "/session.har", atomically: true, encoding: .utf8)
        let imported = try await KakapoProcess.run([
            "cassette", "import-har", directory + "/session.har", directory + "/api.json",
        ])
        #expect(imported.status == 0, "\(imported.error)")
        let written = try String(contentsOfFile: directory + "/api.json", encoding: .utf8)
        for secret in [
            "hdr-api-token-111", "hdr-private-222", "qry-amz-cred-777", "resp-hdr-sess-5", "resp-access-token-1",
            Self.jwt,
        ] {
            #expect(!written.contains(secret), "\(secret) reached the cassette")
        }
        #expect(written.contains("page=1"))
        #expect(try await KakapoProcess.run(["cassette", "lint", directory + "/api.json"]).status == 0)
    }

    @Test(
        "--no-redact keeps a name; --redact-all-except redacts every name not listed; --redact NAME redacts one anywhere"
    )
    func keepAndAllowlist() async throws {
        let upstream = try await Self.api()
        defer { Task { await upstream.stop() } }
        let directory = try Fixtures.temporaryDirectory()
        for (arguments, file) in [
            (["--no-redact", "X-API-Token"], "kept.json"),
            (
                ["--redact-all-except", "X-Trace", "--redact-all-except", "page", "--redact-all-except", "user"],
                "allow.json"
            ),
            (["--redact", "theme", "--redact", "x-trace"], "named.json"),
        ] {
            let recorder = try KakapoProcess(
                ["record", "--upstream", upstream.baseURL, "--cassette", directory + "/" + file, "--port", "0"]
                    + arguments)
            let client = try TestClient(port: try await recorder.waitUntilListening())
            _ = try await client.send(
                .get, "/me?page=2&lang=en",
                headers: HTTP.Headers([
                    ("X-API-Token", "hdr-api-token-111"), ("X-Trace", "trace-42"), ("Accept", "text/plain"),
                ]))
            _ = try await client.send(
                .post, "/login", headers: ["Content-Type": "application/json"],
                body: Array(#"{"user": "ada", "theme": "dark"}"#.utf8))
            client.shutdown()
            recorder.send(SIGINT)
            #expect(try await recorder.waitForExit() == 0)
        }
        let kept = try String(contentsOfFile: directory + "/kept.json", encoding: .utf8)
        #expect(kept.contains(#"["X-API-Token", "hdr-api-token-111"]"#), "\(kept)")

        let allowed = try String(contentsOfFile: directory + "/allow.json", encoding: .utf8)
        #expect(allowed.contains(#"["X-Trace", "trace-42"]"#))
        #expect(allowed.contains(#"["Accept", "[REDACTED]"]"#))
        #expect(allowed.contains("/me?page=2&lang=[REDACTED]"))
        #expect(allowed.contains(#""user": "ada""#) && !allowed.contains("dark"))
        #expect(allowed.contains(#"["Content-Type", "application/json"]"#), "framing headers are kept")

        let named = try String(contentsOfFile: directory + "/named.json", encoding: .utf8)
        #expect(named.contains(#"["X-Trace", "[REDACTED]"]"#), "\(named)")
        // The request's member; the upstream's echo of the body as a string keeps "dark", a value shorter than
        // the six bytes an echo must have to be searched for.
        #expect(named.contains(#""theme": "[REDACTED]""#) && !named.contains(#""theme": "dark""#))
        #expect(named.contains(#""user": "ada""#) && named.contains("lang=en"))
        let both = try await KakapoProcess.run(
            [
                "record", "--upstream", upstream.baseURL, "--cassette", directory + "/x.json", "--redact", "Theme",
                "--no-redact", "theme",
            ])
        #expect(both.status != 0)
        #expect(both.error.contains("--redact and --no-redact both name"), "\(both.error)")
    }

    @Test("verify: a redacted value is not drift, a live token is never printed, and --update keeps a 2xx over a 401")
    func verifyRedaction() async throws {
        let liveToken = "Bearer live-token-0123456789"
        let status = Mutex(200)
        let upstream = try await TestUpstream.start { request in
            let auth = request.headers["Authorization"] ?? ""
            let body =
                #"{"user": "ada", "session": "s-\#(UUID().uuidString.prefix(8))", "seen": "\#(auth)"}"#
            return .response(
                HTTP.Response(
                    status: status.withLock { $0 }, headers: ["Content-Type": "application/json"],
                    body: Array(body.utf8)))
        }
        defer { Task { await upstream.stop() } }
        let path = try Fixtures.temporaryDirectory() + "/verify.json"
        let recorder = try KakapoProcess(["record", "--upstream", upstream.baseURL, "--cassette", path, "--port", "0"])
        let client = try TestClient(port: try await recorder.waitUntilListening())
        _ = try await client.send(.get, "/me", headers: ["Authorization": "Bearer recorded-token-987654"])
        client.shutdown()
        recorder.send(SIGINT)
        #expect(try await recorder.waitForExit() == 0)

        let verify = try await KakapoProcess.run([
            "verify", "--cassette", path, "--upstream", upstream.baseURL, "--header", "Authorization: \(liveToken)",
        ])
        #expect(verify.status == 0, "\(verify.output)\(verify.error)")
        #expect(verify.output.contains("#0 GET /me: same"), "\(verify.output)")
        #expect(!verify.output.contains("live-token") && !verify.error.contains("live-token"))

        status.withLock { $0 = 401 }
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        let update = try await KakapoProcess.run([
            "verify", "--cassette", path, "--upstream", upstream.baseURL, "--header", "Authorization: \(liveToken)",
            "--update",
        ])
        #expect(update.status == 1)
        #expect(update.output.contains("status: 200 recorded, 401 now"))
        #expect(update.error.contains("kept #0 GET /me: the live API answered 401"), "\(update.error)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before, "a 401 replaced a 200 recording")
        #expect(!update.output.contains("live-token") && !update.error.contains("live-token"))

        let accepted = try await KakapoProcess.run([
            "verify", "--cassette", path, "--upstream", upstream.baseURL, "--update", "--accept-auth-failures",
        ])
        #expect(accepted.error.contains("re-recorded 1 interaction"), "\(accepted.error)")
        #expect(try CassetteFile.load(path).interactions[0].response.status == 401)
    }

    @Test("the journal is bounded in bytes: 300 distinct 70 KB paths keep it small, and DELETE empties it")
    func journalBoundedInBytes() async throws {
        let process = try KakapoProcess(["replay", "--cassette", CLITests.demoCassette, "--port", "0"])
        let client = try TestClient(port: try await process.waitUntilListening())
        let filler = String(repeating: "a", count: 70_000)
        for index in 0..<300 {
            _ = try await client.send(.get, "/\(index)/\(filler)")
        }
        let journal = try await client.send(.get, "/__kakapo/requests")
        #expect(journal.status == 200)
        // Before the bound, the journal held every URL whole: 21 MB here.
        #expect(journal.body.count < 2_000_000, "the journal answered \(journal.body.count) bytes")
        #expect(journal.text.contains("more bytes]"), "a cut URL says so")
        #expect((try await client.send(.delete, "/__kakapo/requests")).status < 300)
        let emptied = try await client.send(.get, "/__kakapo/requests")
        #expect(emptied.body.count < 2_000, "\(emptied.text)")
        client.shutdown()
        process.send(SIGINT)
        _ = try await process.waitForExit()
    }
}
