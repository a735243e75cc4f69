import Foundation
import KakapoCassette
import KakapoTestSupport
import Testing

/// WebSockets through Kakapo: tunnelled to the upstream, unrecorded, while plain requests are recorded.
@Suite("WebSockets")
struct WebSocketTests {
    /// The RFC 6455 example key and the accept value a real server derives from it.
    static let key = "dGhlIHNhbXBsZSBub25jZQ=="
    static let accept = "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="

    /// A client's text frame: FIN, opcode 1, masked as clients must.
    static func maskedTextFrame(_ text: String) -> [UInt8] {
        let payload = Array(text.utf8)
        let mask: [UInt8] = [0x37, 0xFA, 0x21, 0x3D]
        return [0x81, 0x80 | UInt8(payload.count)] + mask
            + payload.enumerated().map { $0.element ^ mask[$0.offset % 4] }
    }

    /// Opens a WebSocket to `port`, sends one message and returns the handshake answer and the reply text.
    static func converse(port: Int, message: String) async -> (head: String, reply: String) {
        await withCheckedContinuation { continuation in
            Thread {
                guard let connection = try? RawConnection(port: port, timeout: 5) else {
                    continuation.resume(returning: ("", ""))
                    return
                }
                connection.send(
                    "GET /chat HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                        + "Sec-WebSocket-Key: \(key)\r\nSec-WebSocket-Version: 13\r\n\r\n")
                let (head, _) = connection.receiveHead()
                guard head.hasPrefix("HTTP/1.1 101") else {
                    continuation.resume(returning: (head, ""))
                    return
                }
                connection.send(bytes: maskedTextFrame(message))
                let (reply, _) = connection.receive { $0.contains(message) }
                continuation.resume(returning: (head, reply))
            }.start()
        }
    }

    @Test("a WebSocket is tunnelled to the upstream while recording, and nothing of it is recorded")
    func tunnelledWhileRecording() async throws {
        let server = try await WebSocketEchoServer.start()
        let cassette = try Fixtures.temporaryDirectory() + "/ws.json"
        let recorder = try KakapoProcess([
            "record", "--upstream", server.baseURL, "--cassette", cassette, "--port", "0",
        ])
        let port = try await recorder.waitUntilListening()
        let (head, reply) = await Self.converse(port: port, message: "hello kakapo")
        #expect(head.contains(Self.accept), "\(head)")
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
        let (missed, _) = await Self.converse(port: try await replay.waitUntilListening(), message: "x")
        #expect(missed.hasPrefix("HTTP/1.1 404"), "\(missed)")
        replay.send(SIGINT)
        #expect(try await replay.waitForExit() == 0)

        // An upstream that is gone: 502 with the reason.
        await server.stop()
        let orphan = try KakapoProcess(["serve", "--upstream", server.baseURL, "--mode", "passthrough", "--port", "0"])
        let (refused, _) = await Self.converse(port: try await orphan.waitUntilListening(), message: "x")
        #expect(refused.hasPrefix("HTTP/1.1 502"), "\(refused)")
        orphan.send(SIGINT)
        #expect(try await orphan.waitForExit() == 0)
    }
}
