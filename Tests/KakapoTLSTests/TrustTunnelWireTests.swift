import Foundation
import KakapoTestSupport
import Testing

extension HTTPSTests {
    /// Issue 25: a decrypted `CONNECT` tunnel is held to `--idle-timeout` like any connection (blind
    /// tunnels are covered in KakapoProxyTests' TrustWireTests).
    @Suite("Trust: idle decrypted tunnels")
    struct TrustTunnelWireTests {
        @Test("a decrypted tunnel that stays quiet (no TLS handshake yet) is closed after the idle timeout")
        func idleDecryptedTunnel() async throws {
            let directory = try Fixtures.temporaryDirectory()
            let proxyProcess = try KakapoProcess([
                "serve", "--proxy", "--ca-dir", directory + "/ca", "--idle-timeout", "0.5", "--port", "0",
            ])
            let port = try await proxyProcess.waitUntilListening()
            let connection = try RawConnection(port: port, timeout: 5)
            connection.send("CONNECT example.test:443 HTTP/1.1\r\nHost: example.test:443\r\n\r\n")
            #expect(connection.receiveHead().head.hasPrefix("HTTP/1.1 200 Connection Established"))
            // Without a close the read gives up after its 5-second timeout and reports the tunnel open.
            #expect(connection.receive().closed, "the quiet decrypted tunnel stayed open")
            proxyProcess.send(SIGINT)
            #expect(try await proxyProcess.waitForExit() == 0)
        }
    }
}
