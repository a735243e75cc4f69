import Foundation
import Kakapo
import KakapoTestSupport
import Testing

/// `kakapo cassette` on WebSocket conversations (issue 31): recording redacts them, `lint` finds credentials
/// in messages, `redact` cleans them, `show` lists them, and HAR export and import keep them.
@Suite("kakapo cassette: WebSocket conversations")
struct WebSocketCassetteCommandTests {
    static let conversation = WebSocketConversation(
        subprotocol: "chat",
        messages: [
            WebSocketMessage(
                from: .client, offsetMilliseconds: 3, payload: .text(#"{"type":"auth","token":"m-secret-5566"}"#)),
            WebSocketMessage(from: .server, offsetMilliseconds: 10.5, payload: .text("welcome\nada")),
            WebSocketMessage(from: .client, offsetMilliseconds: 20, payload: .text(#"{"type":"subscribe"}"#)),
            WebSocketMessage(from: .server, offsetMilliseconds: 40, payload: .binary([1, 2, 3, 4])),
            WebSocketMessage(
                from: .server, offsetMilliseconds: 2400,
                payload: .text("price update " + String(repeating: "x", count: 80))),
        ],
        close: WebSocketClose(from: .server, code: 1000, reason: "done", offsetMilliseconds: 2410))

    /// A cassette written with redaction off: the auth message holds a live token.
    static func leakyCassette() throws -> String {
        let path = try Fixtures.temporaryDirectory() + "/ws.json"
        let plain = Interaction(
            request: HTTP.Request(method: .get, target: "/health", headers: ["Host": "ws.test"]),
            response: HTTP.Response(status: 200), recordedAt: "2026-11-24T08:00:00.000Z", durationMilliseconds: 1)
        let upgrade = Interaction(
            request: HTTP.Request(
                method: .get, target: "/chat",
                headers: HTTP.Headers([("Host", "ws.test"), ("Upgrade", "websocket"), ("Connection", "Upgrade")])),
            response: HTTP.Response(
                status: 101,
                headers: HTTP.Headers([
                    ("Upgrade", "websocket"), ("Connection", "Upgrade"), ("Sec-WebSocket-Protocol", "chat"),
                ])),
            recordedAt: "2026-11-24T08:00:01.000Z", durationMilliseconds: 2, webSocket: conversation)
        try CassetteFile.save(Cassette(interactions: [plain, upgrade]), to: path)
        return path
    }

    @Test("lint names the interaction, the message and the member of a credential in a message; redact cleans it")
    func lintAndRedact() async throws {
        let leaky = try Self.leakyCassette()
        let lint = try await KakapoProcess.run(["cassette", "lint", leaky])
        #expect(lint.status == 1)
        #expect(
            lint.error.contains("credential in WebSocket message 0 (from the client) of interaction #1 at /token"),
            "\(lint.error)")
        // The place in the file: the line of that message's text.
        let text = try String(contentsOfFile: leaky, encoding: .utf8)
        let line = try #require(
            text.split(separator: "\n", omittingEmptySubsequences: false).firstIndex { $0.contains("m-secret-5566") })
        #expect(lint.error.contains("ws.json:\(line + 1):"), "\(lint.error)")

        let redact = try await KakapoProcess.run(["cassette", "redact", leaky])
        #expect(redact.status == 0)
        #expect(redact.output.contains("token ×1"), "\(redact.output)")
        let cleaned = try String(contentsOfFile: leaky, encoding: .utf8)
        #expect(!cleaned.contains("m-secret-5566"))
        #expect(cleaned.contains(#"{\"type\":\"auth\",\"token\":\"[REDACTED]\"}"#), "\(cleaned)")
        #expect(try await KakapoProcess.run(["cassette", "lint", leaky]).status == 0)
    }

    @Test("show sums up a conversation on the upgrade's line; --messages lists each message")
    func show() async throws {
        let path = try Self.leakyCassette()
        let result = try await KakapoProcess.run(["cassette", "show", path])
        #expect(result.status == 0)
        let lines = result.output.split(separator: "\n").map(String.init)
        #expect(lines.count == 2, "\(lines)")
        #expect(lines[0].hasPrefix("#0\tGET\t/health\t200\t0 B\t"), "\(lines)")
        #expect(
            lines[1].hasPrefix(
                "#1\tGET\t/chat\t101\twebsocket (chat): 2 from the client, 3 from the server, 2.4 s, closed 1000 by the server (done)\t"
            ), "\(lines)")

        let detailed = try await KakapoProcess.run(["cassette", "show", "--messages", path])
        let detail = detailed.output.split(separator: "\n").map(String.init)
        #expect(
            Array(detail.dropFirst(2))
                == [
                    "\t" + #"-> 3 ms  {"type":"auth","token":"m-secret-5566"}"#,
                    "\t" + #"<- 10.5 ms  welcome\nada"#,
                    "\t" + #"-> 20 ms  {"type":"subscribe"}"#,
                    "\t<- 40 ms  <4 bytes binary>",
                    "\t<- 2400 ms  price update " + String(repeating: "x", count: 47) + "…",
                    "\t<- 2410 ms  close 1000 done",
                ], "\(detail)")
    }

    @Test("export-har writes _webSocketMessages and import-har reads them back, redacted")
    func harRoundTrip() async throws {
        let path = try Self.leakyCassette()
        let directory = (path as NSString).deletingLastPathComponent
        let exported = try await KakapoProcess.run(["cassette", "export-har", path, directory + "/ws.har"])
        #expect(exported.status == 0, "\(exported.error)")
        let har = try String(contentsOfFile: directory + "/ws.har", encoding: .utf8)
        #expect(har.contains(#""_resourceType": "websocket""#) && har.contains(#""_webSocketMessages""#), "\(har)")
        let imported = try await KakapoProcess.run([
            "cassette", "import-har", directory + "/ws.har", directory + "/again.json",
        ])
        #expect(imported.status == 0, "\(imported.error)")
        #expect(imported.output.contains("redacted token ×1"), "\(imported.output)")
        let again = try CassetteFile.load(directory + "/again.json")
        let conversation = try #require(again.interactions.last?.webSocket)
        #expect(conversation.counts == (client: 2, server: 3))
        #expect(conversation.messages[0].payload == .text(#"{"type":"auth","token":"[REDACTED]"}"#))
        #expect(Array(conversation.messages.dropFirst()) == Array(Self.conversation.messages.dropFirst()))
        #expect(conversation.close == Self.conversation.close)
        #expect(conversation.subprotocol == "chat")
    }

    @Test(
        "a conversation recorded through Kakapo is written redacted: the handshake's token echoed and the auth message's"
    )
    func recordedRedacted() async throws {
        let server = try await WebSocketEchoServer.start()
        let cassette = try Fixtures.temporaryDirectory() + "/recorded.json"
        let recorder = try KakapoProcess([
            "record", "--upstream", server.baseURL, "--cassette", cassette, "--port", "0",
        ])
        let client = try await WebSocketClient.connect(
            port: try await recorder.waitUntilListening(), path: "/chat?token=q-secret-0042",
            headers: [("Authorization", "Bearer h-secret-9f8e7d")])
        #expect(client.handshake.status == 101)
        try client.send(text: #"{"type":"auth","token":"m-secret-5566"}"#)
        let echo = await client.nextMessage()
        #expect(echo?.text == #"echo: {"type":"auth","token":"m-secret-5566"}"#)
        try client.send(text: "resume q-secret-0042")
        #expect(await client.nextMessage()?.text == "echo: resume q-secret-0042")
        try client.close()
        _ = await client.receive(timeout: .seconds(5))
        recorder.send(SIGINT)
        #expect(try await recorder.waitForExit() == 0)
        await server.stop()

        let text = try String(contentsOfFile: cassette, encoding: .utf8)
        for secret in ["q-secret-0042", "h-secret-9f8e7d", "m-secret-5566"] {
            #expect(!text.contains(secret), "\(secret) in \(text)")
        }
        let conversation = try #require(try CassetteFile.load(cassette).interactions.first?.webSocket)
        #expect(
            conversation.messages.map(\.payload) == [
                .text(#"{"type":"auth","token":"[REDACTED]"}"#), .text(#"echo: {"type":"auth","token":"[REDACTED]"}"#),
                .text("resume [REDACTED]"), .text("echo: resume [REDACTED]"),
            ])
        #expect(recorder.standardError.contains("echoed secret"), "the summary says what was redacted")
        #expect(try await KakapoProcess.run(["cassette", "lint", cassette]).status == 0)
    }
}
