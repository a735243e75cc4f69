import Foundation
import Kakapo
import KakapoTestSupport
import Synchronization
import Testing

/// `kakapo verify`: drift between a cassette and the live API.
@Suite("Command line: verify")
struct VerifyCommandTests {
    /// An API whose answers carry a fresh timestamp, UUID and request id on every call, and whose
    /// meaningful answers change with `version`.
    final class API: Sendable {
        let version = Mutex(1)
        let calls = Mutex(0)

        func reply(_ request: HTTP.Request) -> TestUpstream.Reply {
            let version = self.version.withLock { $0 }
            let call = calls.withLock { count in
                count += 1
                return count
            }
            let stamp = String(format: "2026-11-22T10:%02d:%02d.000Z", call % 60, call % 60)
            var headers: HTTP.Headers = ["Content-Type": "application/json", "X-Version": version == 1 ? "1" : "2"]
            headers.add(name: "X-Request-Id", value: UUID().uuidString)
            switch request.path {
            case "/users/1":
                let name = version == 1 ? "Ada" : "Ada L"
                let body =
                    #"{"id": "1", "name": "\#(name)", "updatedAt": "\#(stamp)", "session": "\#(UUID().uuidString)", "meta": {"requestId": "r\#(call)", "build": \#(version)}}"#
                return .response(HTTP.Response(status: 200, headers: headers, body: Array(body.utf8)))
            case "/status":
                return .response(HTTP.Response(status: version == 1 ? 200 : 503, contentType: "text/plain", text: "ok"))
            case "/items" where request.method == .post:
                return .response(
                    HTTP.Response(status: 201, contentType: "application/json", text: #"{"id": "\#(call)"}"#))
            default:
                return .response(HTTP.Response(status: 200, headers: headers, body: Array(#"[1, 2, 3]"#.utf8)))
            }
        }
    }

    static func record(_ upstream: TestUpstream, to path: String) async throws {
        let server = try ProxyServer(
            configuration: ProxyConfiguration(
                port: 0, mode: .new, cassettePath: path, upstream: UpstreamConfiguration(baseURL: upstream.baseURL)))
        let client = try TestClient(port: try await server.start())
        _ = try await client.send(.get, "/users/1")
        _ = try await client.send(.get, "/status")
        _ = try await client.send(.get, "/items")
        _ = try await client.send(
            .post, "/items", headers: ["Content-Type": "application/json"], body: Array("{}".utf8))
        client.shutdown()
        await server.shutdown()
    }

    @Test(
        "volatile-looking values unmarked are benign; a status is changed and listed, other values benign; --update re-records only the changed"
    )
    func drift() async throws {
        let api = API()
        let upstream = try await TestUpstream.start { api.reply($0) }
        defer { Task { await upstream.stop() } }
        let path = try Fixtures.temporaryDirectory() + "/api.json"
        try await Self.record(upstream, to: path)

        let clean = try await KakapoProcess.run(["verify", "--cassette", path, "--upstream", upstream.baseURL])
        #expect(clean.status == 0, "\(clean.output)\(clean.error)")
        // updatedAt, session and requestId change on every call but are not marked volatile yet.
        #expect(clean.output.contains("#0 GET /users/1: benign\n#1"), "\(clean.output)")
        #expect(clean.output.contains("#1 GET /status: same"))
        #expect(clean.output.contains("#3 POST /items: skipped"))
        #expect(clean.output.hasSuffix("2 same, 1 benign, 0 changed, 1 skipped, 0 failed\n"), "\(clean.output)")

        api.version.withLock { $0 = 2 }
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        let drifted = try await KakapoProcess.run(["verify", "--cassette", path, "--upstream", upstream.baseURL])
        #expect(drifted.status == 1)
        #expect(drifted.output.contains("#0 GET /users/1: benign\n"), "\(drifted.output)")
        #expect(drifted.output.contains("#1 GET /status: changed\n    status: 200 recorded, 503 now\n"))
        #expect(drifted.output.contains("#2 GET /items: benign\n"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before, "verify without --update changed the file")

        let json = try JSONParser.parse(
            try await KakapoProcess.run([
                "verify", "--cassette", path, "--upstream", upstream.baseURL, "--format", "json",
            ]).output)
        let details = json["interactions"]?.arrayValue?.first?["details"]?.arrayValue?.compactMap(\.stringValue) ?? []
        #expect(details.contains(#"body /name: "Ada" recorded, "Ada L" now"#), "\(details)")
        #expect(details.contains("body /meta/build: 1 recorded, 2 now"))
        #expect(details.contains("header x-version: 1 recorded, 2 now"))
        #expect(json["changed"] == 1)
        #expect(json["benign"] == 2)

        let ignoring = try await KakapoProcess.run([
            "verify", "--cassette", path, "--upstream", upstream.baseURL, "--ignore-json", "/name", "--ignore-json",
            "/meta", "--format", "json",
        ])
        let report = try JSONParser.parse(ignoring.output)
        let ignored = report["interactions"]?.arrayValue?.first?["details"]?.arrayValue?.compactMap(\.stringValue) ?? []
        #expect(!ignored.contains { $0.contains("/name") || $0.contains("/meta") }, "\(ignored)")
        #expect(report["skipped"] == 1)

        let unsafe = try await KakapoProcess.run([
            "verify", "--cassette", path, "--upstream", upstream.baseURL, "--include-unsafe",
        ])
        #expect(unsafe.output.contains("#3 POST /items: benign"), "\(unsafe.output)")

        let original = try CassetteFile.load(path)
        let updated = try await KakapoProcess.run([
            "verify", "--cassette", path, "--upstream", upstream.baseURL, "--update",
        ])
        #expect(updated.status == 1)
        #expect(updated.error.contains("re-recorded 1 interaction in"), "\(updated.error)")
        let after = try CassetteFile.load(path)
        #expect(after.interactions[3] == original.interactions[3], "the skipped POST changed")
        #expect(after.interactions[0] == original.interactions[0], "a benign recording was re-recorded")
        #expect(after.interactions[1].response.status == 503)
        let again = try await KakapoProcess.run(["verify", "--cassette", path, "--upstream", upstream.baseURL])
        #expect(again.status == 0, "\(again.output)")
    }

    @Test("a bad cassette exits 3; an unreachable API is reported as failed with exit 1")
    func failures() async throws {
        let directory = try Fixtures.temporaryDirectory()
        try "{".write(toFile: directory + "/bad.json", atomically: true, encoding: .utf8)
        let bad = try await KakapoProcess.run([
            "verify", "--cassette", directory + "/bad.json", "--upstream", "http://127.0.0.1:1",
        ])
        #expect(bad.status == 3)
        #expect(bad.error.contains("bad.json:"))
        let api = API()
        let upstream = try await TestUpstream.start { api.reply($0) }
        try await Self.record(upstream, to: directory + "/api.json")
        await upstream.stop()
        let down = try await KakapoProcess.run([
            "verify", "--cassette", directory + "/api.json", "--upstream", upstream.baseURL,
        ])
        #expect(down.status == 1)
        #expect(down.output.contains("#0 GET /users/1: failed"))
        #expect(down.output.contains("0 same, 0 benign, 0 changed, 1 skipped, 3 failed"))
    }
}
