import Foundation
import KakapoTestSupport
import NIOCore
import NIOSSL
import Testing

extension HTTPSTests {
    /// A `wss://` conversation replayed through `--proxy`: the client asks the proxy to `CONNECT`, Kakapo
    /// terminates TLS with a certificate from its own CA, and plays the recording inside the tunnel.
    @Suite("Secure WebSocket replay")
    struct SecureWebSocketReplayTests {
        @Test("a wss:// conversation is replayed through --proxy with Kakapo's CA, with no upstream")
        func replayedThroughTheProxy() async throws {
            let directory = try Fixtures.temporaryDirectory()
            let cassette = directory + "/wss.json"
            try """
            {"version": 1, "interactions": [
              {"request": {"method": "GET", "url": "https://chat.example.com/live",
                 "headers": [["Upgrade", "websocket"], ["Connection", "Upgrade"]]},
               "response": {"status": 101, "headers": []},
               "websocket": {"subprotocol": "v1", "messages": [
                 {"from": "server", "offsetMs": 0, "text": "ready"},
                 {"from": "client", "offsetMs": 50, "text": "{\\"op\\": \\"join\\"}"},
                 {"from": "server", "offsetMs": 150, "base64": "3q2+7w=="}],
                "close": {"from": "server", "code": 1001, "reason": "going away"}}}]}
            """.write(toFile: cassette, atomically: true, encoding: .utf8)
            let caDirectory = directory + "/ca"
            let replayer = try KakapoProcess([
                "replay", "--proxy", "--cassette", cassette, "--ca-dir", caDirectory, "--port", "0",
            ])
            let proxyPort = try await replayer.waitUntilListening()
            var configuration = TLSConfiguration.makeClientConfiguration()
            configuration.trustRoots = .certificates(
                try NIOSSLCertificate.fromPEMFile(caDirectory + "/kakapo-ca.pem"))
            let context = try NIOSSLContext(configuration: configuration)
            let client = try await WebSocketClient.connect(
                host: "chat.example.com", port: 443, path: "/live", subprotocols: ["v1"], proxy: proxyPort,
                proxyHost: "127.0.0.1",
                tls: { channel in
                    try channel.pipeline.syncOperations.addHandler(
                        try NIOSSLClientHandler(context: context, serverHostname: "chat.example.com"),
                        position: .first)
                })
            #expect(client.handshake.status == 101, "\(client.handshake.head) \(client.handshake.body)")
            #expect(client.handshake.subprotocol == "v1")
            #expect(await client.nextMessage()?.text == "ready")
            try client.send(text: #"{ "op" : "join" }"#)
            #expect(await client.nextMessage()?.payload == .binary([0xDE, 0xAD, 0xBE, 0xEF]))
            let close = try #require(await client.closeFrame())
            #expect(close.code == 1001)
            #expect(close.reason == "going away")
            try? client.close(code: 1001)
            #expect(await client.waitForDisconnect())
            replayer.send(SIGINT)
            #expect(try await replayer.waitForExit() == 0, "\(replayer.standardError)")
            #expect(replayer.standardError.contains("replayed 1, missed 0"), "\(replayer.standardError)")
        }
    }
}
