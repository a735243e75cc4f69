import Foundation
import Kakapo
import KakapoTestSupport
import Testing

@Suite("WebSocket replay")
struct WebSocketReplayTests {
    @Test("a route's script is played over a real WebSocket (transport smoke test)")
    func scriptSmoke() async throws {
        let harness = try await ProxyHarness.serving(
            routes: """
                routes:
                  - path: /chat
                    websocket:
                      subprotocol: chat
                      send: [{text: "welcome"}]
                      on:
                        - when: {text: "bye"}
                          send: [{text: "see you"}]
                          close: {code: 1000, reason: done}
                        - send: [{text: "echo: {{message.text}}"}]
                """, name: "routes.yaml")
        let client = try await WebSocketClient.connect(port: harness.port, path: "/chat", subprotocols: ["chat"])
        #expect(client.handshake.status == 101)
        #expect(client.handshake.subprotocol == "chat")
        #expect(await client.nextMessage()?.text == "welcome")
        try client.ping([1, 2, 3])
        #expect(await client.nextPong() == [1, 2, 3])
        try client.send(text: "hello")
        #expect(await client.nextMessage()?.text == "echo: hello")
        try client.send(text: "bye")
        #expect(await client.nextMessage()?.text == "see you")
        let close = await client.closeFrame()
        #expect(close?.code == 1000)
        #expect(close?.reason == "done")
        try? client.close(code: 1000)
        #expect(await client.waitForDisconnect())
        await harness.stop()
    }
}
