import Foundation
import Kakapo
import KakapoTestSupport
import Testing

/// An answer that goes out before its request's body has all arrived (the upstream failed while the client
/// was still uploading) ends the connection: the rest of that body is not read as a new request.
@Suite("Trust: answers before the end of an upload")
struct TrustEarlyAnswerTests {
    @Test("a streamed upload answered 502 early is closed after the answer, and a client leaving mid-body harms no one")
    func earlyAnswerCloses() async throws {
        // A port nothing listens on (and no other test can take): the forward fails at once, while the
        // client is still sending.
        let refusing = try ClosedPort()
        let unreachable = "http://127.0.0.1:\(refusing.port)"
        let proxy = try await ProxyHarness.start(
            ProxyConfiguration(mode: .passthrough, upstream: UpstreamConfiguration(baseURL: unreachable)))
        // Past its first MiB, which is read here before anything goes upstream: the upload streams.
        let first = String(repeating: "h", count: (1 << 20) + 16)
        for _ in 0..<5 {
            let connection = try RawConnection(port: proxy.port, timeout: 4)
            connection.send(
                "POST /upload HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                    + String(first.utf8.count, radix: 16) + "\r\n" + first + "\r\n")
            let (answer, _) = connection.receive { $0.contains("\r\n\r\n") && $0.contains("}") }
            #expect(answer.hasPrefix("HTTP/1.1 502"), "\(answer)")
            #expect(answer.lowercased().contains("connection: close"), "\(answer)")
            // The client goes on sending the body it started. The server has closed, or closes now: the
            // read ends at once (an end of stream, or a reset when the bytes arrived after the close), well
            // before the read timeout that a connection left open would run into.
            connection.send("5\r\nworld\r\n")
            let started = ContinuousClock.now
            _ = connection.receive()
            let waited = ContinuousClock.now - started
            #expect(waited < .seconds(2), "the connection stayed open after an answer to half a request")
        }
        let health = try RawConnection(port: proxy.port)
        health.send("GET /__kakapo/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        #expect(health.receive { $0.contains("}") }.text.hasPrefix("HTTP/1.1 200"))
        await proxy.stop()
        withExtendedLifetime(refusing) {}
    }
}
