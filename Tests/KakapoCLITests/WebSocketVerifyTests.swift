import Foundation
import Kakapo
import KakapoTestSupport
import Testing

/// `kakapo verify` and `kakapo cassette check` leave WebSocket conversations alone: libcurl cannot hold one
/// (nor could `--update` re-record it), and OpenAPI does not describe WebSockets.
@Suite("Command line: WebSocket conversations in verify and check")
struct WebSocketVerifyTests {
    static let cassette = """
        {"version": 1, "interactions": [
          {"request": {"method": "GET", "url": "/chat", "headers": [["Upgrade", "websocket"], ["Connection", "Upgrade"]]},
           "response": {"status": 101, "headers": [["Upgrade", "websocket"], ["Connection", "Upgrade"]]},
           "websocket": {"messages": [{"from": "server", "offsetMs": 0, "text": "hi"}],
                         "close": {"from": "server", "code": 1000, "reason": "bye"}}},
          {"request": {"method": "GET", "url": "/status", "headers": []},
           "response": {"status": 200, "headers": [["Content-Type", "text/plain"]], "body": {"text": "ok"}}}
        ]}
        """

    @Test("verify skips a conversation, saying why, and --update keeps it as recorded")
    func verify() async throws {
        let upstream = try await TestUpstream.start { _ in
            .response(HTTP.Response(status: 200, contentType: "text/plain", text: "changed"))
        }
        defer { Task { await upstream.stop() } }
        let path = try Fixtures.temporaryDirectory() + "/ws.json"
        try Self.cassette.write(toFile: path, atomically: true, encoding: .utf8)
        let before = try CassetteFile.load(path)

        let result = try await KakapoProcess.run(["verify", "--cassette", path, "--upstream", upstream.baseURL])
        #expect(result.status == 1, "\(result.output)\(result.error)")
        #expect(result.output.contains("#0 GET /chat: skipped\n    a WebSocket conversation"), "\(result.output)")
        #expect(result.output.contains("#1 GET /status: changed"), "\(result.output)")

        let updated = try await KakapoProcess.run([
            "verify", "--cassette", path, "--upstream", upstream.baseURL, "--update",
        ])
        #expect(updated.error.contains("re-recorded 1 interaction"), "\(updated.error)")
        let after = try CassetteFile.load(path)
        #expect(after.interactions[0] == before.interactions[0], "verify --update changed the conversation")
        #expect(after.interactions[1].response.body == Array("changed".utf8))
    }

    @Test("cassette check holds no conversation against the spec")
    func check() async throws {
        let path = try Fixtures.temporaryDirectory() + "/ws.json"
        try Self.cassette.write(toFile: path, atomically: true, encoding: .utf8)
        let spec = try Fixtures.temporaryDirectory() + "/spec.yaml"
        try """
        openapi: 3.0.3
        info: {title: t, version: "1"}
        paths:
          /status:
            get:
              responses:
                "200":
                  description: ok
                  content: {text/plain: {schema: {type: string}}}
        """.write(toFile: spec, atomically: true, encoding: .utf8)
        let result = try await KakapoProcess.run(["cassette", "check", path, "--openapi", spec])
        #expect(result.status == 0, "\(result.output)\(result.error)")
        #expect(!result.output.contains("/chat"), "\(result.output)")
        #expect(result.output.contains("2 interactions checked"), "\(result.output)")
        #expect(result.output.contains("2 allowed, 0 not allowed"), "\(result.output)")
    }
}
