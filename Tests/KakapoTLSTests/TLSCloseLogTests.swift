import Foundation
import KakapoTestSupport
import Testing

extension HTTPSTests {
    /// What the proxy logs when a decrypted connection ends: one clear line for a client that refuses
    /// Kakapo's CA, nothing for ordinary closes, and never BoringSSL's error stack.
    @Suite("TLS close log")
    struct TLSCloseLogTests {
        static let trustLine = "curl or the browser did not trust Kakapo's CA"

        /// Python's ssl module (standard library): a CONNECT, one request, then a close of the socket
        /// without close_notify. Arguments: the proxy URL, host:port, the CA file.
        static let uncleanClient = """
            import socket, ssl, sys
            host, port = sys.argv[2].rsplit(":", 1)
            proxy = sys.argv[1].rsplit(":", 1)
            s = socket.create_connection((proxy[0].split("//")[1], int(proxy[1])), timeout=20)
            s.sendall(f"CONNECT {sys.argv[2]} HTTP/1.1\\r\\nHost: {sys.argv[2]}\\r\\n\\r\\n".encode())
            head = b""
            while b"\\r\\n\\r\\n" not in head:
                head += s.recv(1000)
            t = ssl.create_default_context(cafile=sys.argv[3]).wrap_socket(s, server_hostname=host)
            t.sendall(f"GET /hello/p HTTP/1.1\\r\\nHost: {sys.argv[2]}\\r\\n\\r\\n".encode())
            answer = b""
            while b"}" not in answer:
                answer += t.recv(10000)
            print(answer.split(b"\\r\\n")[0].decode())
            t.close()
            """

        @Test("a curl that trusts Kakapo's CA and closes normally leaves no trust line and no TLS error in the log")
        func trustedCloseIsQuiet() async throws {
            let directory = try Fixtures.temporaryDirectory()
            let secure = try await HTTPSUpstream.start()
            let proxyProcess = try KakapoProcess([
                "serve", "--proxy", "--ca-dir", directory + "/ca", "--upstream-ca", secure.caCertificate, "--port", "0",
            ])
            let proxy = "http://127.0.0.1:\(try await proxyProcess.waitUntilListening())"
            for name in ["a", "b", "c"] {
                let trusting = try await Curl.run([
                    "--proxy", proxy, "--cacert", directory + "/ca/kakapo-ca.pem",
                    "https://localhost:\(secure.port)/hello/\(name)",
                ])
                #expect(trusting.body == #"{"hello":"\#(name)","host":"localhost:\#(secure.port)"}"#)
            }
            // Two requests on one connection, closed by curl after the exchange.
            let twice = try await Curl.run([
                "--proxy", proxy, "--cacert", directory + "/ca/kakapo-ca.pem",
                "https://localhost:\(secure.port)/hello/x", "https://localhost:\(secure.port)/hello/y",
            ])
            #expect(twice.status == 0, "\(twice.error)")
            // A client that closes without close_notify after a finished exchange, as browsers do.
            let unclean = try await KakapoProcess.run(
                [
                    "python3", "-c", Self.uncleanClient, proxy, "localhost:\(secure.port)",
                    directory + "/ca/kakapo-ca.pem",
                ],
                executable: "/usr/bin/env")
            #expect(unclean.output == "HTTP/1.1 200 OK\n", "\(unclean.error)")
            proxyProcess.send(SIGINT)
            #expect(try await proxyProcess.waitForExit() == 0)
            let log = proxyProcess.standardError
            #expect(!log.contains("did not trust") && !log.contains("does not trust"), "\(log)")
            #expect(!log.contains("connection for https://localhost:\(secure.port) closed"), "\(log)")
            try await secure.stop()
        }

        @Test(
            "a curl without Kakapo's CA gets one clear line naming kakapo ca trust, without BoringSSL's dump",
            arguments: [
                // TLS 1.2: the alert arrives and names itself.
                (["--tls-max", "1.2"], " (TLS alert unknown_ca)"),
                // TLS 1.3: curl's OpenSSL sends the alert unencrypted, so it cannot be read.
                ([], ""),
            ])
        func untrustedClientGetsOneLine(options: [String], alert: String) async throws {
            let directory = try Fixtures.temporaryDirectory()
            let secure = try await HTTPSUpstream.start()
            let proxyProcess = try KakapoProcess([
                "serve", "--proxy", "--ca-dir", directory + "/ca", "--upstream-ca", secure.caCertificate, "--port", "0",
            ])
            let proxy = "http://127.0.0.1:\(try await proxyProcess.waitUntilListening())"
            let untrusting = try await Curl.run(
                options + ["--proxy", proxy, "https://localhost:\(secure.port)/hello/a"])
            #expect(untrusting.status == 60)
            proxyProcess.send(SIGINT)
            #expect(try await proxyProcess.waitForExit() == 0)
            let log = proxyProcess.standardError
            let lines = log.split(separator: "\n").filter { $0.contains(Self.trustLine) }
            #expect(lines.count == 1, "\(log)")
            #expect(
                lines.first?.hasSuffix(
                    "connection for https://localhost:\(secure.port) closed: \(Self.trustLine)\(alert): run `kakapo ca trust`"
                ) == true, "\(log)")
            for dump in ["OPENSSL_internal", "BoringSSL", ".cc:", "handshakeFailed", "sslError"] {
                #expect(!log.contains(dump), "\(dump) in \(log)")
            }
            try await secure.stop()
        }
    }
}
