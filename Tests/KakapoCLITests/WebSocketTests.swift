import Foundation
import KakapoCassette
import KakapoTestSupport
import Testing

/// WebSockets through Kakapo: tunnelled to the upstream and recorded, alongside plain requests.
@Suite("WebSockets")
struct WebSocketTests {
    @Test("a WebSocket is tunnelled to the upstream while recording, and its conversation is recorded with the upgrade")
    func tunnelledWhileRecording() async throws {
        let server = try await WebSocketEchoServer.start()
        let directory = try Fixtures.temporaryDirectory()
        let cassette = directory + "/ws.json"
        let recorder = try KakapoProcess([
            "record", "--upstream", server.baseURL, "--cassette", cassette, "--port", "0",
        ])
        let port = try await recorder.waitUntilListening()
        let (head, reply) = await WebSocketConversation.converse(port: port, message: "hello kakapo")
        #expect(head.contains(WebSocketConversation.accept), "\(head)")
        #expect(reply.contains("echo: hello kakapo"), "\(reply)")
        // A plain request on another connection is recorded too (the echo server answers 404).
        let client = try TestClient(port: port)
        #expect(try await client.send(.get, "/plain").status == 404)
        client.shutdown()
        recorder.send(SIGINT)
        #expect(try await recorder.waitForExit() == 0)
        let recorded = try CassetteFile.load(cassette)
        #expect(Set(recorded.interactions.map(\.request.target)) == ["/chat", "/plain"])
        let conversation = try #require(recorded.interactions.first { $0.request.target == "/chat" }?.webSocket)
        #expect(conversation.messages.map(\.payload) == [.text("hello kakapo"), .text("echo: hello kakapo")])
        #expect(conversation.messages.map(\.from) == [.client, .server])

        // Without an upstream (replay) an upgrade that was not recorded is an ordinary request: a miss.
        let plainOnly = directory + "/plain.json"
        try CassetteFile.save(
            Cassette(interactions: recorded.interactions.filter { $0.webSocket == nil }), to: plainOnly)
        let replay = try KakapoProcess(["replay", "--cassette", plainOnly, "--port", "0"])
        let (missed, _) = await WebSocketConversation.converse(
            port: try await replay.waitUntilListening(), message: "x")
        #expect(missed.hasPrefix("HTTP/1.1 404"), "\(missed)")
        replay.send(SIGINT)
        #expect(try await replay.waitForExit() == 0)

        // An upstream that is gone: 502 with the reason.
        await server.stop()
        let orphan = try KakapoProcess(["serve", "--upstream", server.baseURL, "--mode", "passthrough", "--port", "0"])
        let (refused, _) = await WebSocketConversation.converse(
            port: try await orphan.waitUntilListening(), message: "x")
        #expect(refused.hasPrefix("HTTP/1.1 502"), "\(refused)")
        orphan.send(SIGINT)
        #expect(try await orphan.waitForExit() == 0)
    }
}
