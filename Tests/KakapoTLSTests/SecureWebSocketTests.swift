import Foundation
import KakapoCassette
import KakapoTestSupport
import NIOCore
import NIOSSL
import Testing

extension HTTPSTests {
    /// WebSockets to an `https://` upstream: tunnelled over TLS that Kakapo opens itself, trusting what
    /// libcurl trusts for the same upstream, and recorded from the plaintext inside it.
    @Suite("Secure WebSockets")
    struct SecureWebSocketTests {
        @Test(
            "a WebSocket to an https:// upstream is tunnelled over TLS with --upstream-ca and recorded; an untrusted certificate gets 502"
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
            // The conversation, read from the plaintext above the upstream's TLS.
            let conversation = try #require(try CassetteFile.load(cassette).interactions.first?.webSocket)
            #expect(conversation.messages.map(\.payload) == [.text("hello over tls"), .text("echo: hello over tls")])

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

        @Test(
            "a wss:// conversation through --proxy is recorded: Kakapo terminates the client's TLS with its CA and opens its own to the upstream"
        )
        func recordedThroughTheProxy() async throws {
            let echo = try await WebSocketEchoServer.start()
            let directory = try Fixtures.temporaryDirectory()
            let secure = try KakapoProcess([
                "serve", "--upstream", echo.baseURL, "--mode", "passthrough", "--tls", "--ca-dir",
                directory + "/upstream-ca", "--port", "0",
            ])
            let securePort = try await secure.waitUntilListening()
            let cassette = directory + "/proxied.json"
            let recorder = try KakapoProcess([
                "record", "--proxy", "--cassette", cassette, "--ca-dir", directory + "/ca", "--upstream-ca",
                directory + "/upstream-ca/kakapo-ca.pem", "--port", "0",
            ])
            let proxyPort = try await recorder.waitUntilListening()
            var configuration = TLSConfiguration.makeClientConfiguration()
            configuration.trustRoots = .certificates(
                try NIOSSLCertificate.fromPEMFile(directory + "/ca/kakapo-ca.pem"))
            let context = try NIOSSLContext(configuration: configuration)
            let client = try await WebSocketClient.connect(
                host: "localhost", port: securePort, path: "/chat?room=tls", proxy: proxyPort,
                tls: { channel in
                    try channel.pipeline.syncOperations.addHandler(
                        try NIOSSLClientHandler(context: context, serverHostname: "localhost"), position: .first)
                })
            #expect(client.handshake.status == 101, "\(client.handshake.head) \(recorder.standardError)")
            try client.send(text: "secret handshake")
            #expect(await client.nextMessage()?.text == "echo: secret handshake")
            try client.close(code: 1000, reason: "bye")
            #expect(await client.waitForDisconnect())
            let line = "recorded WebSocket GET "
            let deadline = ContinuousClock.now + .seconds(10)
            while !recorder.standardError.contains(line) && ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(20))
            }
            recorder.send(SIGINT)
            #expect(try await recorder.waitForExit() == 0)
            #expect(
                recorder.standardError.contains("1 client and 1 server messages, closed 1000 by the client"),
                "\(recorder.standardError)")
            let interaction = try #require(try CassetteFile.load(cassette).interactions.first)
            #expect(interaction.request.url == "https://localhost:\(securePort)/chat?room=tls")
            #expect(interaction.response.status == 101)
            let conversation = try #require(interaction.webSocket)
            #expect(
                conversation.messages.map(\.payload) == [.text("secret handshake"), .text("echo: secret handshake")])
            #expect(conversation.close?.code == 1000 && conversation.close?.reason == "bye")
            secure.send(SIGINT)
            #expect(try await secure.waitForExit() == 0)
            await echo.stop()
        }
    }
}
