import Foundation
import KakapoTestSupport
import Testing

extension HTTPSTests {
    /// WebSockets to an `https://` upstream: tunnelled over TLS that Kakapo opens itself, trusting what
    /// libcurl trusts for the same upstream.
    @Suite("Secure WebSockets")
    struct SecureWebSocketTests {
        @Test(
            "a WebSocket to an https:// upstream is tunnelled over TLS with --upstream-ca, unrecorded; an untrusted certificate gets 502"
        )
        func tunnelledOverTLS() async throws {
            // The wss:// upstream: a `kakapo serve --tls` (its own CA) in front of a plain WebSocket echo server.
            let echo = try await WebSocketEchoServer.start()
            let directory = try Fixtures.temporaryDirectory()
            let secure = try KakapoProcess([
                "serve", "--upstream", echo.baseURL, "--mode", "passthrough", "--tls", "--ca-dir",
                directory + "/upstream-ca", "--port", "0",
            ])
            let securePort = try await secure.waitUntilListening()
            let caCertificate = directory + "/upstream-ca/kakapo-ca.pem"

            let cassette = directory + "/wss.json"
            let recorder = try KakapoProcess([
                "record", "--upstream", "https://localhost:\(securePort)", "--upstream-ca", caCertificate,
                "--cassette", cassette, "--port", "0",
            ])
            let port = try await recorder.waitUntilListening()
            let (head, reply) = await WebSocketConversation.converse(port: port, message: "hello over tls")
            #expect(head.contains(WebSocketConversation.accept), "\(head)")
            #expect(reply.contains("echo: hello over tls"), "\(reply)")
            recorder.send(SIGINT)
            #expect(try await recorder.waitForExit() == 0)
            // Nothing was recorded, so no cassette was written.
            #expect(!FileManager.default.fileExists(atPath: cassette))

            // Without the upstream's CA, the TLS handshake fails: 502 with the reason.
            let untrusting = try KakapoProcess([
                "serve", "--upstream", "https://localhost:\(securePort)", "--mode", "passthrough", "--port", "0",
            ])
            let (refused, echoed) = await WebSocketConversation.converse(
                port: try await untrusting.waitUntilListening(), message: "x")
            #expect(refused.hasPrefix("HTTP/1.1 502"), "\(refused)")
            #expect(echoed.isEmpty)
            untrusting.send(SIGINT)
            #expect(try await untrusting.waitForExit() == 0)

            secure.send(SIGINT)
            #expect(try await secure.waitForExit() == 0)
            await echo.stop()
        }
    }
}
