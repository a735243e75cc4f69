import Foundation
import Kakapo
import KakapoTestSupport
import Testing

/// Tokens a browser's WebSocket can only send as a subprotocol (Kubernetes, OpenAI Realtime, Deepgram) are
/// redacted wherever the recording holds them, and the recording still replays for a client with another.
@Suite("Command line: WebSocket subprotocol credentials")
struct WebSocketSubprotocolRedactionTests {
    static let prefix = "base64url.bearer.authorization.k8s.io."

    @Test("a Kubernetes token in Sec-WebSocket-Protocol is redacted in all five places and replays with another")
    func kubernetesTokenRecordedAndReplayed() async throws {
        let token = "c2VjcmV0dG9rZW5zdXBlcnNlY3JldDEyMw"
        let echo = try await WebSocketEchoServer.start(namingSubprotocol: true)
        let cassette = try Fixtures.temporaryDirectory() + "/k8s.json"
        let recorder = try KakapoProcess(["record", "--upstream", echo.baseURL, "--cassette", cassette, "--port", "0"])
        let recording = try await WebSocketClient.connect(
            port: try await recorder.waitUntilListening(), path: "/exec",
            subprotocols: [Self.prefix + token, "base64.binary.k8s.io"])
        #expect(recording.handshake.status == 101)
        #expect(recording.handshake.subprotocol == Self.prefix + token)
        try recording.send(text: "my token is \(token)")
        #expect(await recording.nextMessage()?.text == "echo: my token is \(token)")
        try recording.close(code: 1000, reason: "bye \(token)")
        #expect(await recording.closeFrame()?.reason == "bye \(token)")
        _ = await recording.waitForDisconnect()
        recorder.send(SIGINT)
        #expect(try await recorder.waitForExit() == 0, "\(recorder.standardError)")
        await echo.stop()

        let text = try String(contentsOfFile: cassette, encoding: .utf8)
        #expect(!text.contains(token), "\(text)")
        // The request's header, the 101's header and the subprotocol keep the prefix; the echoes lose the token.
        #expect(text.components(separatedBy: Self.prefix + "[REDACTED]").count - 1 == 3, "\(text)")
        #expect(text.contains("base64.binary.k8s.io"))
        #expect(text.contains(#""text": "my token is [REDACTED]""#), "\(text)")
        #expect(text.contains(#""text": "echo: my token is [REDACTED]""#), "\(text)")
        #expect(text.contains(#""reason": "bye [REDACTED]""#), "\(text)")

        // Replayed for a client with another token: the 101 names its own entry, and its message, which
        // holds its token where the recording holds the placeholder, matches.
        let other = "b3RoZXJ0b2tlbm90aGVyc2VjcmV0NDU2"
        let replayer = try KakapoProcess(["replay", "--cassette", cassette, "--port", "0", "--strict"])
        let client = try await WebSocketClient.connect(
            port: try await replayer.waitUntilListening(), path: "/exec",
            subprotocols: [Self.prefix + other, "base64.binary.k8s.io"])
        #expect(client.handshake.status == 101, "\(client.handshake.head)")
        #expect(client.handshake.subprotocol == Self.prefix + other)
        try client.send(text: "my token is \(other)")
        #expect(await client.nextMessage()?.text == "echo: my token is [REDACTED]")
        try client.close(code: 1000, reason: "bye")
        #expect(await client.closeFrame()?.code == 1000)
        #expect(await client.waitForDisconnect())
        replayer.send(SIGINT)
        #expect(try await replayer.waitForExit() == 0, "\(replayer.standardError)")
    }

    @Test("OpenAI's, Deepgram's and AppSync's subprotocol credentials go; plain subprotocols stay")
    func knownShapes() {
        let cases: [(offered: String, redacted: String)] = [
            (
                "realtime, openai-insecure-api-key.sk-proj-abc123DEF456, openai-beta.realtime-v1",
                "realtime, openai-insecure-api-key.[REDACTED], openai-beta.realtime-v1"
            ),
            ("token, 0123456789abcdef0123456789abcdef01234567", "token, [REDACTED]"),
            ("bearer,eyJhbGciOi.abc123.def456", "bearer,[REDACTED]"),
            ("bearer.abc", "bearer.[REDACTED]"),
            (
                "aws-appsync-event-ws, header-eyJob3N0IjoiZXhhbXBsZS5jb20iLCJ4LWFwaS1rZXkiOiJkYTItMTIzIn0",
                "aws-appsync-event-ws, header-[REDACTED]"
            ),
            ("access_token.Zm9vYmFyYmF6MTIzNDU2Nzg5", "access_token.[REDACTED]"),
            // Not credentials: too short or no digit after a prefix that may hold one, no marker before.
            ("token.chat-v2, graphql-transport-ws", "token.chat-v2, graphql-transport-ws"),
            ("chat, 0123456789abcdef0123456789abcdef01234567", "chat, 0123456789abcdef0123456789abcdef01234567"),
        ]
        for (offered, redacted) in cases {
            let headers = Redactor().redact(headers: ["Sec-WebSocket-Protocol": offered])
            #expect(headers["Sec-WebSocket-Protocol"] == redacted, "\(offered)")
        }
        // Kept when the user asks, and by a redactor that keeps everything.
        let kept = Redactor().adding(headers: [], queryParameters: [], keeping: ["Sec-WebSocket-Protocol"])
        #expect(
            kept.redact(headers: ["Sec-WebSocket-Protocol": "bearer.abc"])["Sec-WebSocket-Protocol"] == "bearer.abc")
        #expect(
            Redactor.disabled.redact(headers: ["Sec-WebSocket-Protocol": "bearer.abc"])["Sec-WebSocket-Protocol"]
                == "bearer.abc")
    }
}
