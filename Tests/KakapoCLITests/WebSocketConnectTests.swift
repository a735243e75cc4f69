import Foundation
import Kakapo
import KakapoTestSupport
import Testing

/// A `ws://` WebSocket through the forward proxy: the client tunnels it with `CONNECT` (as browsers and
/// most libraries do for any WebSocket through a proxy) and speaks plaintext HTTP inside, which Kakapo reads
/// as it reads a decrypted tunnel, so the conversation is recorded and replayed like a `wss://` one.
@Suite("Command line: ws:// through --proxy")
struct WebSocketConnectTests {
    /// Connects through the proxy at `proxyPort` to the chat server's address, converses, and returns what
    /// the server said.
    static func converse(proxyPort: Int, upstreamPort: Int) async throws -> [String] {
        let client = try await WebSocketClient.connect(
            port: upstreamPort, path: "/chat", subprotocols: ["chat.v1"], proxy: proxyPort)
        #expect(client.handshake.status == 101, "\(client.handshake.head)\(client.handshake.body)")
        var heard: [String] = []
        heard.append(await client.nextMessage()?.text ?? "<nothing>")
        try client.send(text: "hello")
        heard.append(await client.nextMessage()?.text ?? "<nothing>")
        try client.send(text: "bye")
        let close = await client.closeFrame()
        heard.append("close \(close?.code.map(String.init) ?? "none") \(close?.reason ?? "")")
        client.disconnect()
        return heard
    }

    @Test("recorded through a plaintext CONNECT tunnel, then replayed through one with the server gone")
    func recordAndReplay() async throws {
        let chat = try await WebSocketChatServer.start()
        let directory = try Fixtures.temporaryDirectory()
        let cassette = directory + "/ws.json"
        let recorder = try KakapoProcess([
            "record", "--proxy", "--cassette", cassette, "--ca-dir", directory + "/ca", "--port", "0",
        ])
        let recorded = try await Self.converse(
            proxyPort: try await recorder.waitUntilListening(), upstreamPort: chat.port)
        #expect(recorded == [#"{"type":"welcome"}"#, "hi there", "close 1000 done"], "\(recorder.standardError)")
        let line = "recorded WebSocket GET "
        let deadline = ContinuousClock.now + .seconds(10)
        while !recorder.standardError.contains(line) && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        recorder.send(SIGINT)
        #expect(try await recorder.waitForExit() == 0, "\(recorder.standardError)")
        let interaction = try #require(try CassetteFile.load(cassette).interactions.first)
        #expect(interaction.request.url == "http://127.0.0.1:\(chat.port)/chat")
        #expect(interaction.webSocket?.counts.client == 2)
        await chat.stop()

        let replay = try KakapoProcess([
            "replay", "--proxy", "--cassette", cassette, "--ca-dir", directory + "/ca", "--strict", "--port", "0",
        ])
        let replayed = try await Self.converse(
            proxyPort: try await replay.waitUntilListening(), upstreamPort: chat.port)
        #expect(replayed == recorded, "\(replay.standardError)")
        replay.send(SIGINT)
        #expect(try await replay.waitForExit() == 0, "\(replay.standardError)")
        #expect(replay.standardError.contains("replayed 1, missed 0"), "\(replay.standardError)")
    }
}
