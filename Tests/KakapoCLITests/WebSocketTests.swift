import Foundation
import KakapoCassette
import KakapoTestSupport
import Testing

/// WebSockets through Kakapo: tunnelled to the upstream, unrecorded, while plain requests are recorded.
@Suite("WebSockets")
struct WebSocketTests {
    @Test("a WebSocket is tunnelled to the upstream while recording, and nothing of it is recorded")
    func tunnelledWhileRecording() async throws {
        let server = try await WebSocketEchoServer.start()
        let cassette = try Fixtures.temporaryDirectory() + "/ws.json"
        let recorder = try KakapoProcess([
            "record", "--upstream", server.baseURL, "--cassette", cassette, "--port", "0",
        ])
        let port = try await recorder.waitUntilListening()
        let (head, reply) = await WebSocketConversation.converse(port: port, message: "hello kakapo")
        #expect(head.contains(WebSocketConversation.accept), "\(head)")
        #expect(reply.contains("echo: hello kakapo"), "\(reply)")
        // A plain request on another connection is still recorded (the echo server answers 404).
        let client = try TestClient(port: port)
        #expect(try await client.send(.get, "/plain").status == 404)
        client.shutdown()
        recorder.send(SIGINT)
        #expect(try await recorder.waitForExit() == 0)
        #expect(try CassetteFile.load(cassette).interactions.map(\.request.target) == ["/plain"])

        // Without an upstream (replay) an upgrade is an ordinary request: a miss.
        let replay = try KakapoProcess(["replay", "--cassette", cassette, "--port", "0"])
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
