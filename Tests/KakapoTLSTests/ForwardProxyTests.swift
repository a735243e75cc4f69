import Foundation
import KakapoHTTP
import KakapoTestSupport
import Testing

extension HTTPSTests {
    /// `--proxy`: Kakapo as the HTTP(S) forward proxy clients reach through HTTP_PROXY/HTTPS_PROXY, tested
    /// with the built binary, curl, and local HTTP and HTTPS upstreams (the latter with its own CA).
    @Suite("Forward proxy and HTTPS interception")
    struct ForwardProxyTests {
        @Test(
            "record HTTPS and HTTP for three origins through the proxy, stop the upstreams, replay them through the proxy"
        )
        func recordThenReplay() async throws {
            let directory = try Fixtures.temporaryDirectory()
            let cassette = directory + "/hosts.json"
            let caDirectory = directory + "/ca"
            let kakapoCA = caDirectory + "/kakapo-ca.pem"
            let secure = try await HTTPSUpstream.start()
            let plain = try await TestUpstream.start { request in
                .response(
                    HTTP.Response(status: 200, contentType: "application/json", text: #"{"plain":"\#(request.path)"}"#))
            }
            let recorder = try KakapoProcess([
                "record", "--proxy", "--cassette", cassette, "--ca-dir", caDirectory, "--upstream-ca",
                secure.caCertificate,
                "--port", "0",
            ])
            let proxy = "http://127.0.0.1:\(try await recorder.waitUntilListening())"
            let first = try await Curl.run([
                "--proxy", proxy, "--cacert", kakapoCA, "https://localhost:\(secure.port)/hello/a",
            ])
            #expect(first.status == 0, "\(first.error)")
            #expect(first.body == #"{"hello":"a","host":"localhost:\#(secure.port)"}"#)
            let second = try await Curl.run([
                "--proxy", proxy, "--cacert", kakapoCA, "-H", "Content-Type: application/json", "-d",
                #"{"name":"kiwi"}"#,
                "https://127.0.0.1:\(secure.port)/echo",
            ])
            #expect(second.httpStatus == 201)
            #expect(second.body == #"{"got":"kiwi"}"#)
            let third = try await Curl.run(["--proxy", proxy, "\(plain.baseURL)/plain?x=1"])
            #expect(third.body == #"{"plain":"/plain"}"#)
            #expect(third.source == "upstream")
            recorder.send(SIGINT)
            #expect(try await recorder.waitForExit() == 0)
            #expect(recorder.standardError.contains("recorded 3 interactions"))
            try await secure.stop()
            await plain.stop()

            let saved = try String(contentsOfFile: cassette, encoding: .utf8)
            #expect(saved.contains(#""url": "https://localhost:\#(secure.port)/hello/a""#))
            #expect(saved.contains(#""url": "https://127.0.0.1:\#(secure.port)/echo""#))
            #expect(saved.contains(#""url": "http://127.0.0.1:\#(plain.port)/plain?x=1""#))
            let show = try await KakapoProcess.run(["cassette", "show", cassette])
            #expect(show.output.contains("\thttps://localhost:\(secure.port)/hello/a\t"))

            let replayer = try KakapoProcess([
                "replay", "--proxy", "--cassette", cassette, "--ca-dir", caDirectory, "--port", "0",
            ])
            let replayProxy = "http://127.0.0.1:\(try await replayer.waitUntilListening())"
            let replayed = try await Curl.run([
                "--proxy", replayProxy, "--cacert", kakapoCA, "https://localhost:\(secure.port)/hello/a",
            ])
            #expect(replayed.body == first.body)
            #expect(replayed.source == "cassette")
            let posted = try await Curl.run([
                "--proxy", replayProxy, "--cacert", kakapoCA, "-H", "Content-Type: application/json", "-d",
                #"{"name":"kiwi"}"#, "https://127.0.0.1:\(secure.port)/echo",
            ])
            #expect(posted.httpStatus == 201)
            #expect(posted.source == "cassette")
            let plainAgain = try await Curl.run(["--proxy", replayProxy, "\(plain.baseURL)/plain?x=1"])
            #expect(plainAgain.body == third.body)
            // Recorded for localhost only: the same path on the other host is a miss that names the host.
            let otherHost = try await Curl.run([
                "--proxy", replayProxy, "--cacert", kakapoCA, "https://127.0.0.1:\(secure.port)/hello/a",
            ])
            #expect(otherHost.httpStatus == 404)
            #expect(otherHost.source == "miss")
            #expect(otherHost.body.contains(#""url": "https://127.0.0.1:\#(secure.port)/hello/a""#))
            #expect(
                otherHost.body.contains(
                    "host: https://127.0.0.1:\(secure.port) here, https://localhost:\(secure.port) recorded"))
            replayer.send(SIGINT)
            #expect(try await replayer.waitForExit() == 0)
        }

        @Test("a host left out of --intercept gets a blind tunnel: the upstream's own certificate, nothing recorded")
        func blindTunnel() async throws {
            let directory = try Fixtures.temporaryDirectory()
            let cassette = directory + "/blind.json"
            let secure = try await HTTPSUpstream.start()
            let proxyProcess = try KakapoProcess([
                "record", "--proxy", "--intercept", "*.example.com", "--cassette", cassette, "--ca-dir",
                directory + "/ca",
                "--port", "0",
            ])
            let proxy = "http://127.0.0.1:\(try await proxyProcess.waitUntilListening())"
            // Trusting the upstream's CA works: the client talks TLS with the upstream itself.
            let through = try await Curl.run([
                "--proxy", proxy, "--cacert", secure.caCertificate, "https://localhost:\(secure.port)/hello/tunnel",
            ])
            #expect(through.status == 0, "\(through.error)")
            #expect(through.body == #"{"hello":"tunnel","host":"localhost:\#(secure.port)"}"#)
            // Trusting Kakapo's CA does not: Kakapo never sees inside the tunnel.
            let intercepted = try await Curl.run([
                "--proxy", proxy, "--cacert", directory + "/ca/kakapo-ca.pem",
                "https://localhost:\(secure.port)/hello/x",
            ])
            #expect(intercepted.status == 60)
            // A tunnel to a port nobody listens on: 502 on the CONNECT, with the reason.
            let closed = try await Curl.run(["--proxy", proxy, "https://localhost:1/hello"])
            #expect(closed.status != 0)
            #expect(closed.error.contains("502") || closed.error.contains("CONNECT"))
            proxyProcess.send(SIGINT)
            #expect(try await proxyProcess.waitForExit() == 0)
            #expect(proxyProcess.standardError.contains("recorded 0 interactions"))
            try await secure.stop()
        }

        @Test("a client that does not trust Kakapo's CA fails the handshake, and the proxy goes on serving others")
        func untrustedClient() async throws {
            let directory = try Fixtures.temporaryDirectory()
            let secure = try await HTTPSUpstream.start()
            let proxyProcess = try KakapoProcess([
                "serve", "--proxy", "--ca-dir", directory + "/ca", "--upstream-ca", secure.caCertificate, "--port", "0",
            ])
            let proxy = "http://127.0.0.1:\(try await proxyProcess.waitUntilListening())"
            let untrusting = try await Curl.run(["--proxy", proxy, "https://localhost:\(secure.port)/hello/a"])
            #expect(untrusting.status == 60)
            #expect(untrusting.error.contains("certificate"))
            let trusting = try await Curl.run([
                "--proxy", proxy, "--cacert", directory + "/ca/kakapo-ca.pem",
                "https://localhost:\(secure.port)/hello/b",
            ])
            #expect(trusting.body == #"{"hello":"b","host":"localhost:\#(secure.port)"}"#)
            #expect(trusting.source == "upstream")
            proxyProcess.send(SIGINT)
            #expect(try await proxyProcess.waitForExit() == 0)
            #expect(proxyProcess.standardError.contains("connection for https://localhost:\(secure.port) closed"))
            try await secure.stop()
        }

        @Test("malformed CONNECT targets get 400 with the reason, TLS garbage only closes its own connection")
        func hostileConnects() async throws {
            let directory = try Fixtures.temporaryDirectory()
            let proxyProcess = try KakapoProcess(["serve", "--proxy", "--ca-dir", directory + "/ca", "--port", "0"])
            let port = try await proxyProcess.waitUntilListening()
            for target in ["nonsense", "host:port", ":443", "[::1:443", "a b:443"] {
                let connection = try RawConnection(port: port)
                connection.send("CONNECT \(target) HTTP/1.1\r\nHost: x\r\n\r\n")
                let (text, _) = connection.receive { $0.contains("}") }
                #expect(text.hasPrefix("HTTP/1.1 400"), "\(target): \(text)")
                if !target.contains(" ") {
                    #expect(text.contains("malformed CONNECT target \\\"\(target)\\\": expected host:port"), "\(text)")
                }
            }
            // A tunnel that is opened and then fed something other than TLS.
            let garbage = try RawConnection(port: port)
            garbage.send("CONNECT localhost:443 HTTP/1.1\r\nHost: localhost:443\r\n\r\n")
            let (established, _) = garbage.receive { $0.contains("\r\n\r\n") }
            #expect(established.hasPrefix("HTTP/1.1 200 Connection Established\r\n"))
            garbage.send("GET / HTTP/1.1\r\nHost: localhost\r\n\r\n\u{0}\u{1}\u{2}")
            let (_, closed) = garbage.receive()
            #expect(closed)
            // A plain request next to them is answered as usual.
            let connection = try RawConnection(port: port)
            connection.send("GET /__kakapo/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            let (health, _) = connection.receive { $0.contains("}") }
            #expect(health.hasPrefix("HTTP/1.1 200"))
            proxyProcess.send(SIGINT)
            #expect(try await proxyProcess.waitForExit() == 0)
        }

        @Test(
            "the reverse proxy answers TLS with --tls-cert/--tls-key files; a key that does not match is refused at start",
            .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/openssl"), "openssl is not installed"))
        func listenerFromFiles() async throws {
            let directory = try Fixtures.temporaryDirectory()
            for name in ["a", "b"] {
                let made = try await KakapoProcess.run(
                    [
                        "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days",
                        "2",
                        "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost",
                        "-keyout", "\(directory)/\(name)-key.pem", "-out", "\(directory)/\(name)-cert.pem",
                    ], executable: "/usr/bin/openssl")
                #expect(made.status == 0, "\(made.error)")
            }
            let process = try KakapoProcess([
                "replay", "--cassette", CLIFixtures.demoCassette, "--tls-cert", directory + "/a-cert.pem", "--tls-key",
                directory + "/a-key.pem", "--port", "0",
            ])
            let port = try await process.waitUntilListening()
            #expect(process.standardOutput == "kakapo listening on https://127.0.0.1:\(port)\n")
            let answer = try await Curl.run(["--cacert", directory + "/a-cert.pem", "https://localhost:\(port)/users"])
            #expect(answer.status == 0, "\(answer.error)")
            #expect(answer.source == "cassette")
            #expect(answer.body.contains("Grace Hopper"))
            process.send(SIGINT)
            #expect(try await process.waitForExit() == 0)

            let mismatched = try await KakapoProcess.run([
                "replay", "--cassette", CLIFixtures.demoCassette, "--tls-cert", directory + "/a-cert.pem", "--tls-key",
                directory + "/b-key.pem", "--port", "0",
            ])
            #expect(mismatched.status == 3)
            #expect(mismatched.error.contains("cannot be used together"), "\(mismatched.error)")
        }

        @Test("CONNECT without --proxy is refused with 405 and a sentence saying why")
        func connectNeedsProxyMode() async throws {
            let process = try KakapoProcess(["replay", "--cassette", CLIFixtures.demoCassette, "--port", "0"])
            let connection = try RawConnection(port: try await process.waitUntilListening())
            connection.send("CONNECT localhost:443 HTTP/1.1\r\nHost: localhost:443\r\n\r\n")
            let (text, _) = connection.receive { $0.contains("}") }
            #expect(text.hasPrefix("HTTP/1.1 405"))
            #expect(text.contains("CONNECT is answered in forward-proxy mode only (--proxy)"))
            process.send(SIGINT)
            #expect(try await process.waitForExit() == 0)
        }
    }
}

enum CLIFixtures {
    /// The demo cassette in the repository.
    static var demoCassette: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("cassettes/demo.json").path
    }
}
