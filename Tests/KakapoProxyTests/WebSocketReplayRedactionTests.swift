import Foundation
import Kakapo
import KakapoTestSupport
import Testing

/// Recorded conversations whose secrets recording redacted (in client text messages, in the subprotocol)
/// replayed with other secrets, and a handshake Kakapo refuses journaled as refused.
@Suite("WebSocket replay of redacted conversations")
struct WebSocketReplayRedactionTests {
    /// The messages a client sends with `token`: a text login with a bearer token, and the handshake's
    /// `?token=` value echoed in a text message.
    static func messages(_ token: String) -> [String] {
        ["LOGIN Bearer \(token)", "resume session \(token) please"]
    }

    @Test(
        "text messages redacted by kakapo record (a bearer token, the handshake's ?token= echoed) match when replayed with another token"
    )
    func redactedTextMatches() async throws {
        let echo = try await WebSocketEchoServer.start()
        let cassette = try Fixtures.temporaryDirectory() + "/redacted.json"
        let recorder = try KakapoProcess(["record", "--upstream", echo.baseURL, "--cassette", cassette, "--port", "0"])
        let recordedToken = "rec0rded-Secret-4242"
        let recording = try await WebSocketClient.connect(
            port: try await recorder.waitUntilListening(), path: "/chat?token=\(recordedToken)")
        #expect(recording.handshake.status == 101)
        for text in Self.messages(recordedToken) {
            try recording.send(text: text)
            #expect(await recording.nextMessage()?.text == "echo: \(text)")
        }
        try recording.close(code: 1000, reason: "done")
        _ = await recording.closeFrame()
        _ = await recording.waitForDisconnect()
        recorder.send(SIGINT)
        #expect(try await recorder.waitForExit() == 0, "\(recorder.standardError)")
        await echo.stop()

        // The real redaction ran: the token is nowhere in the cassette, the messages hold the placeholder.
        let written = try String(contentsOfFile: cassette, encoding: .utf8)
        #expect(!written.contains(recordedToken))
        #expect(written.contains("LOGIN Bearer [REDACTED]"), "\(written)")
        #expect(written.contains("resume session [REDACTED] please"), "\(written)")

        let replayer = try KakapoProcess(["replay", "--cassette", cassette, "--port", "0", "--strict"])
        let liveToken = "l1ve-0ther-Secret-77"
        let client = try await WebSocketClient.connect(
            port: try await replayer.waitUntilListening(), path: "/chat?token=\(liveToken)")
        #expect(client.handshake.status == 101)
        for text in Self.messages(liveToken) {
            try client.send(text: text)
            // What the server said is played as recorded (its echo of the secret redacted).
            #expect(await client.nextMessage()?.text?.hasPrefix("echo: ") == true)
        }
        try client.close(code: 1000, reason: "done")
        #expect(await client.closeFrame()?.code == 1000)
        #expect(await client.waitForDisconnect())
        replayer.send(SIGINT)
        // --strict exits 1 after a miss: 0 says both messages matched.
        #expect(try await replayer.waitForExit() == 0, "\(replayer.standardError)")
        #expect(!replayer.standardError.contains("WebSocket miss"), "\(replayer.standardError)")
    }

    @Test(
        "a text message that differs elsewhere than the redacted token is still a miss, and its reason shows no secret")
    func redactedTextStillCompared() async throws {
        let harness = try await WebSocketReplayTests.replaying([
            #"{"messages": [{"from": "client", "offsetMs": 0, "text": "LOGIN Bearer [REDACTED]"}, {"from": "server", "offsetMs": 1, "text": "ok"}]}"#
        ])
        let client = try await WebSocketClient.connect(port: harness.port, path: "/chat")
        try client.send(text: "LOGOUT Bearer s3cret-Live-Token-99")
        let close = try #require(await client.closeFrame())
        #expect(close.code == 1008)
        #expect(
            close.reason.hasPrefix("message 1 from the client differs at character 3: \"OUT Bearer [REDACTED]\" here"),
            "\(close.reason)")
        #expect(!close.reason.contains("s3cret"), "\(close.reason)")
        client.disconnect()
        let summary = await harness.stop()
        #expect(summary.counts[.miss, default: 0] == 1)
    }

    @Test(
        "a JSON message whose string recording cut inside (Bearer [REDACTED]) matches with another token, and misses elsewhere"
    )
    func redactedInsideJSONString() async throws {
        let recorded = jsonString(#"{"op": "login", "header": "Bearer [REDACTED]"}"#)
        let harness = try await WebSocketReplayTests.replaying(
            Array(
                repeating:
                    #"{"messages": [{"from": "client", "offsetMs": 0, "text": \#(recorded)}, {"from": "server", "offsetMs": 1, "text": "ok"}]}"#,
                count: 2))
        let matching = try await WebSocketClient.connect(port: harness.port, path: "/chat")
        try matching.send(text: #"{"header": "Bearer l1ve-Token-31337", "op": "login"}"#)
        #expect(await matching.nextMessage()?.text == "ok")
        let other = try await WebSocketClient.connect(port: harness.port, path: "/chat")
        try other.send(text: #"{"header": "Bearer l1ve-Token-31337", "op": "logout"}"#)
        let close = try #require(await other.closeFrame())
        #expect(close.code == 1008)
        #expect(close.reason == #"message 1 from the client differs at /op: "logout" here, "login" recorded"#)
        for client in [matching, other] { client.disconnect() }
        let summary = await harness.stop()
        #expect(summary.counts[.miss, default: 0] == 1)
    }

    @Test(
        "a redacted subprotocol (auth.[REDACTED]) is answered with the client's offered one that fits, none when none fits"
    )
    func redactedSubprotocol() async throws {
        let harness = try await WebSocketReplayTests.replaying(
            Array(
                repeating:
                    #"{"subprotocol": "auth.[REDACTED]", "messages": [{"from": "server", "offsetMs": 0, "text": "hi"}]}"#,
                count: 2))
        let jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjMifQ.c2lnbmF0dXJl"
        let offered = try await WebSocketClient.connect(
            port: harness.port, path: "/chat", subprotocols: ["json", "auth.\(jwt)"])
        #expect(offered.handshake.status == 101)
        #expect(offered.handshake.subprotocol == "auth.\(jwt)")
        #expect(await offered.nextMessage()?.text == "hi")
        // The placeholder stands for at least one character, and never becomes the answer itself.
        let others = try await WebSocketClient.connect(
            port: harness.port, path: "/chat", subprotocols: ["auth.", "other.\(jwt)"])
        #expect(others.handshake.status == 101)
        #expect(others.handshake.subprotocol == nil)
        for client in [offered, others] { client.disconnect() }
        await harness.stop()
    }

    @Test("a handshake Kakapo would play but refuses (bad key) is answered 400 and journaled 400 from error, not 101")
    func refusedHandshakeJournaled() async throws {
        let harness = try await WebSocketReplayTests.replaying([#"{"messages": []}"#])
        let connection = try RawConnection(port: harness.port)
        connection.send(
            "GET /chat HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                + "Sec-WebSocket-Key: short\r\nSec-WebSocket-Version: 13\r\n\r\n")
        let (text, _) = connection.receive { $0.contains("}") }
        #expect(text.hasPrefix("HTTP/1.1 400"), "\(text)")
        let journal = try JSONParser.parse(try await harness.client.send(.get, "/__kakapo/requests").body)
        let entries = journal["requests"]?.arrayValue ?? []
        let chat = entries.filter { $0["url"]?.stringValue?.hasSuffix("/chat") == true }
        #expect(chat.count == 1, "\(entries)")
        #expect(chat.first?["status"]?.numberValue?.intValue == 400, "\(entries)")
        #expect(chat.first?["source"]?.stringValue == "error", "\(entries)")
        let summary = await harness.stop()
        #expect(summary.counts[.error, default: 0] == 1)
        #expect(summary.counts[.cassette, default: 0] == 0)
    }
}

/// `text` as a JSON string literal.
private func jsonString(_ text: String) -> String {
    String(decoding: JSONWriter().write(.string(text)), as: UTF8.self)
}
