import Foundation
import KakapoHTTP
import KakapoTestSupport
import Testing

extension HTTPSTests {
    /// `--upstream-proxy`, `--no-proxy`, the proxy variables of the environment and `--ignore-env-proxy`,
    /// with the built binary, curl, and Debian's tinyproxy as the corporate proxy (its log tells what
    /// really went through it).
    @Suite(
        "Upstream proxies (tinyproxy)",
        .enabled(
            if: TinyProxy.shouldRun, "tinyproxy is not installed (tools/tinyproxy.sh install); CI=true fails instead"))
    struct UpstreamProxyTests {
        /// The password tinyproxy wants, and how the tests write it in a URL (percent-encoded).
        static let password = "pw-9x"
        static let credentials = "alice:pw%2D9x"

        /// Starts `kakapo` with `arguments`, `environment` added to the test's, and returns it listening.
        static func kakapo(_ arguments: [String], environment: [String] = []) async throws -> (KakapoProcess, Int) {
            let process =
                environment.isEmpty
                ? try KakapoProcess(arguments)
                : try KakapoProcess(environment + [KakapoProcess.binary] + arguments, executable: "/usr/bin/env")
            return (process, try await process.waitUntilListening())
        }

        /// Stops a `kakapo` and returns its standard error (logs and summary).
        static func stop(_ process: KakapoProcess) async throws -> String {
            process.send(SIGINT)
            #expect(try await process.waitForExit() == 0)
            return process.standardError
        }

        static func plainUpstream() async throws -> TestUpstream {
            try await TestUpstream.start { request in
                .response(
                    HTTP.Response(status: 200, contentType: "application/json", text: #"{"path":"\#(request.path)"}"#))
            }
        }

        @Test(
            "records through a proxy that wants credentials, to an https upstream (reverse) and an http one (forward), and verifies through it; the credentials are nowhere"
        )
        func recordsThroughProxy() async throws {
            let proxy = try await TinyProxy.start(user: "alice", password: Self.password)
            let secure = try await HTTPSUpstream.start()
            let plain = try await Self.plainUpstream()
            let directory = try Fixtures.temporaryDirectory()
            let through = proxy.url(credentials: Self.credentials)

            let (reverse, reversePort) = try await Self.kakapo([
                "record", "--upstream", "https://127.0.0.1:\(secure.port)", "--upstream-ca", secure.caCertificate,
                "--cassette", directory + "/secure.json", "--port", "0", "--upstream-proxy", through,
            ])
            let hello = try await Curl.run(["http://127.0.0.1:\(reversePort)/hello/kiwi"])
            #expect(hello.httpStatus == 200, "\(hello.body)")
            #expect(hello.body.contains(#""hello":"kiwi""#))
            let reverseLog = try await Self.stop(reverse)
            #expect(reverseLog.contains("recorded 1 interaction"))
            #expect(
                reverseLog.contains(
                    "using the upstream proxy http://***@127.0.0.1:\(proxy.port) from --upstream-proxy for http and https upstreams"
                ))

            let (forward, forwardPort) = try await Self.kakapo([
                "record", "--proxy", "--ca-dir", directory + "/ca", "--cassette", directory + "/forward.json",
                "--port", "0", "--upstream-proxy", through,
            ])
            let answer = try await Curl.run(["--proxy", "http://127.0.0.1:\(forwardPort)", plain.baseURL + "/forward"])
            #expect(answer.httpStatus == 200, "\(answer.body)")
            #expect(answer.source == "upstream")
            let forwardLog = try await Self.stop(forward)
            #expect(forwardLog.contains("recorded 1 interaction"))

            let verify = try await KakapoProcess.run([
                "verify", "--cassette", directory + "/secure.json", "--upstream", "https://127.0.0.1:\(secure.port)",
                "--upstream-ca", secure.caCertificate, "--upstream-proxy", through,
            ])
            #expect(verify.status == 0, "\(verify.output) \(verify.error)")
            #expect(verify.error.contains("using the upstream proxy http://***@127.0.0.1:\(proxy.port)"))

            let log = proxy.log
            #expect(log.components(separatedBy: "CONNECT 127.0.0.1:\(secure.port) HTTP/1.1").count == 3, "\(log)")
            #expect(log.contains("GET http://127.0.0.1:\(plain.port)/forward HTTP/1.1"), "\(log)")
            let cassettes =
                try String(contentsOfFile: directory + "/secure.json", encoding: .utf8)
                + String(contentsOfFile: directory + "/forward.json", encoding: .utf8)
            for text in [cassettes, reverseLog, forwardLog, verify.output, verify.error] {
                #expect(!text.contains(Self.password) && !text.contains("pw%2D9x") && !text.contains("alice"))
            }
            try await secure.stop()
            await plain.stop()
            try await proxy.stop()
        }

        @Test(
            "a proxy that refuses (no credentials, wrong ones) or cannot be reached answers 502 with the reason, and nothing is recorded"
        )
        func refusals() async throws {
            let proxy = try await TinyProxy.start(user: "alice", password: Self.password)
            let secure = try await HTTPSUpstream.start()
            let plain = try await Self.plainUpstream()
            let closed = try ClosedPort()
            let directory = try Fixtures.temporaryDirectory()
            let cases: [(upstream: [String], proxy: String, code: String, message: String)] = [
                (
                    ["--upstream", plain.baseURL], proxy.url(), "upstream-proxy-refused",
                    "the upstream proxy \(proxy.url()) refused with 407 Proxy Authentication Required"
                ),
                (
                    ["--upstream", "https://127.0.0.1:\(secure.port)", "--upstream-ca", secure.caCertificate],
                    proxy.url(credentials: "alice:wrong-pw"), "upstream-proxy-refused",
                    "the upstream proxy http://***@127.0.0.1:\(proxy.port) refused with 401 Unauthorized"
                ),
                (
                    ["--upstream", plain.baseURL], "http://alice:wrong-pw@127.0.0.1:\(closed.port)",
                    "upstream-proxy-unreachable",
                    "cannot reach the upstream proxy http://***@127.0.0.1:\(closed.port): "
                ),
            ]
            for (index, item) in cases.enumerated() {
                let cassette = directory + "/refused-\(index).json"
                let (process, port) = try await Self.kakapo(
                    ["record", "--cassette", cassette, "--port", "0", "--upstream-proxy", item.proxy] + item.upstream)
                let answer = try await Curl.run(["http://127.0.0.1:\(port)/hello/kiwi"])
                #expect(answer.httpStatus == 502, "\(answer.body)")
                #expect(answer.body.contains(#""code": "\#(item.code)""#), "\(answer.body)")
                #expect(answer.body.contains(item.message), "\(answer.body)")
                let log = try await Self.stop(process)
                #expect(log.contains("recorded 0 interactions"), "\(log)")
                for text in [answer.body, log] { #expect(!text.contains("wrong-pw") && !text.contains(Self.password)) }
            }
            try await secure.stop()
            await plain.stop()
            try await proxy.stop()
        }

        @Test(
            "HTTP_PROXY from the environment is used and logged (credentials hidden), --ignore-env-proxy ignores it, --no-proxy bypasses the proxy, and the flag ignores NO_PROXY"
        )
        func environmentAndBypass() async throws {
            let proxy = try await TinyProxy.start()
            let plain = try await Self.plainUpstream()
            let closed = try ClosedPort()
            let directory = try Fixtures.temporaryDirectory()
            let environment = [
                "HTTP_PROXY=\(proxy.url())", "HTTPS_PROXY=http://carol:hunter2@127.0.0.1:\(closed.port)", "NO_PROXY=",
            ]
            let runs: [(arguments: [String], environment: [String], path: String, proxied: Bool, logged: String)] = [
                (
                    [], environment, "/from-environment", true,
                    "using the upstream proxy \(proxy.url()) from HTTP_PROXY for http upstreams"
                ),
                (
                    ["--ignore-env-proxy"], environment, "/environment-ignored", false,
                    "not using HTTP_PROXY, HTTPS_PROXY from the environment: upstreams are reached directly"
                ),
                (
                    ["--upstream-proxy", proxy.url(), "--no-proxy", "example.com,127.0.0.0/8"], [], "/bypassed", false,
                    "using the upstream proxy \(proxy.url()) from --upstream-proxy for http and https upstreams; --no-proxy: example.com,127.0.0.0/8"
                ),
                (
                    ["--upstream-proxy", proxy.url()], ["NO_PROXY=127.0.0.1", "no_proxy=127.0.0.1"], "/flag-wins", true,
                    "--upstream-proxy overrides no_proxy, NO_PROXY from the environment"
                ),
            ]
            for (index, run) in runs.enumerated() {
                let (process, port) = try await Self.kakapo(
                    [
                        "record", "--upstream", plain.baseURL, "--cassette", directory + "/env-\(index).json", "--port",
                        "0",
                    ]
                        + run.arguments, environment: run.environment)
                let answer = try await Curl.run(["http://127.0.0.1:\(port)\(run.path)"])
                #expect(answer.httpStatus == 200, "\(run.path): \(answer.body)")
                let log = try await Self.stop(process)
                #expect(log.contains(run.logged), "\(log)")
                #expect(!log.contains("hunter2") && !log.contains("carol"))
                #expect(proxy.log.contains("GET http://127.0.0.1:\(plain.port)\(run.path) HTTP/1.1") == run.proxied)
            }
            let (environmentOnly, _) = try await Self.kakapo(
                ["record", "--upstream", plain.baseURL, "--cassette", directory + "/env.json", "--port", "0"],
                environment: environment)
            let environmentLog = try await Self.stop(environmentOnly)
            #expect(
                environmentLog.contains(
                    "using the upstream proxy http://***@127.0.0.1:\(closed.port) from HTTPS_PROXY for https upstreams")
            )
            #expect(!environmentLog.contains("hunter2") && !environmentLog.contains("overrides"))
            await plain.stop()
            try await proxy.stop()
        }

        @Test(
            "the forward proxy's blind tunnels go through the upstream proxy with its credentials; without them the CONNECT gets 502"
        )
        func blindTunnels() async throws {
            let proxy = try await TinyProxy.start(user: "alice", password: Self.password)
            let secure = try await HTTPSUpstream.start()
            let directory = try Fixtures.temporaryDirectory()
            for (credentials, works) in [(Self.credentials, true), (nil, false)] {
                let (forward, port) = try await Self.kakapo([
                    "serve", "--proxy", "--intercept", "only.example", "--ca-dir", directory + "/ca", "--port", "0",
                    "--upstream-proxy", proxy.url(credentials: credentials), "--verbose",
                ])
                let answer = try await Curl.run([
                    "--proxy", "http://127.0.0.1:\(port)", "--cacert", secure.caCertificate,
                    "https://127.0.0.1:\(secure.port)/hello/tunnel",
                ])
                let log = try await Self.stop(forward)
                if works {
                    #expect(answer.body.contains(#""hello":"tunnel""#), "\(answer.error) \(log)")
                    #expect(log.contains("blind tunnel through the upstream proxy http://***@127.0.0.1:\(proxy.port)"))
                } else {
                    #expect(answer.error.contains("CONNECT tunnel failed, response 502"), "\(answer.error)")
                    #expect(log.contains("refused with 407 Proxy Authentication Required"), "\(log)")
                }
                #expect(!log.contains(Self.password) && !log.contains("pw%2D9x"))
            }
            #expect(
                proxy.log.components(separatedBy: "CONNECT 127.0.0.1:\(secure.port) HTTP/1.1").count == 3,
                "\(proxy.log)")
            try await secure.stop()
            try await proxy.stop()
        }

        @Test("a WebSocket is tunnelled through the upstream proxy with CONNECT; without credentials it gets 502")
        func webSocketThroughProxy() async throws {
            let proxy = try await TinyProxy.start(user: "alice", password: Self.password)
            let server = try await WebSocketEchoServer.start()
            for (credentials, works) in [(Self.credentials, true), (nil, false)] {
                let (process, port) = try await Self.kakapo([
                    "serve", "--upstream", server.baseURL, "--mode", "passthrough", "--port", "0", "--upstream-proxy",
                    proxy.url(credentials: credentials),
                ])
                let (head, reply) = await WebSocketConversation.converse(port: port, message: "through the proxy")
                if works {
                    #expect(head.contains(WebSocketConversation.accept), "\(head)")
                    #expect(reply.contains("echo: through the proxy"), "\(reply)")
                } else {
                    #expect(head.hasPrefix("HTTP/1.1 502"), "\(head)")
                }
                _ = try await Self.stop(process)
            }
            #expect(
                proxy.log.components(separatedBy: "CONNECT 127.0.0.1:\(server.port) HTTP/1.1").count == 3,
                "\(proxy.log)")
            await server.stop()
            try await proxy.stop()
        }

        /// A TLS front for tinyproxy (which speaks no TLS itself): Python's ssl module relaying to its port.
        static let tlsRelay = #"""
            import socket, ssl, sys, threading
            listen_port, target_port, cert, key = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(cert, key)
            server = socket.create_server(("127.0.0.1", listen_port))
            def pipe(a, b):
                try:
                    while True:
                        data = a.recv(65536)
                        if not data: break
                        b.sendall(data)
                except OSError: pass
                for s in (a, b):
                    try: s.shutdown(socket.SHUT_RDWR)
                    except OSError: pass
            def serve(raw):
                try: conn = context.wrap_socket(raw, server_side=True)
                except (OSError, ssl.SSLError): raw.close(); return
                upstream = socket.create_connection(("127.0.0.1", target_port))
                threading.Thread(target=pipe, args=(conn, upstream), daemon=True).start()
                pipe(upstream, conn)
            print("ready", flush=True)
            while True:
                raw, _ = server.accept()
                threading.Thread(target=serve, args=(raw,), daemon=True).start()
            """#

        @Test(
            "an https:// upstream proxy is trusted through --upstream-ca, refused without it, and not checked with --insecure, for libcurl and for blind tunnels"
        )
        func httpsProxy() async throws {
            let openssl = "/usr/bin/openssl"
            let python = "/usr/bin/python3"
            try #require(
                FileManager.default.isExecutableFile(atPath: openssl)
                    && FileManager.default.isExecutableFile(atPath: python))
            let directory = try Fixtures.temporaryDirectory()
            let (certificate, key) = (directory + "/proxy.pem", directory + "/proxy-key.pem")
            let made = try await KakapoProcess.run(
                [
                    "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", certificate, "-subj",
                    "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1", "-addext",
                    "basicConstraints=critical,CA:TRUE", "-days", "2",
                ], executable: openssl)
            try #require(made.status == 0, "\(made.error)")
            let proxy = try await TinyProxy.start(user: "alice", password: Self.password)
            let secure = try await HTTPSUpstream.start()
            try Self.tlsRelay.write(toFile: directory + "/relay.py", atomically: true, encoding: .utf8)
            let relayPort = try ClosedPort().port
            let relay = try KakapoProcess(
                [directory + "/relay.py", String(relayPort), String(proxy.port), certificate, key], executable: python)
            let deadline = ContinuousClock.now + .seconds(10)
            while !relay.standardOutput.contains("ready") && ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(20))
            }
            let bothCAs = directory + "/both.pem"
            try
                (String(contentsOfFile: secure.caCertificate, encoding: .utf8)
                + String(contentsOfFile: certificate, encoding: .utf8))
                .write(toFile: bothCAs, atomically: true, encoding: .utf8)
            let through = "https://\(Self.credentials)@127.0.0.1:\(relayPort)"
            let runs: [(trust: [String], works: Bool)] = [
                (["--upstream-ca", bothCAs], true),
                (["--upstream-ca", secure.caCertificate], false),
                (["--upstream-ca", secure.caCertificate, "--insecure"], true),
            ]
            for run in runs {
                let (process, port) = try await Self.kakapo(
                    [
                        "record", "--upstream", "https://127.0.0.1:\(secure.port)", "--cassette",
                        directory + "/https-proxy.json", "--mode", "all", "--port", "0", "--upstream-proxy", through,
                    ] + run.trust)
                let answer = try await Curl.run(["http://127.0.0.1:\(port)/hello/tls"])
                _ = try await Self.stop(process)
                if run.works {
                    #expect(answer.body.contains(#""hello":"tls""#), "\(run.trust): \(answer.body)")
                } else {
                    #expect(answer.httpStatus == 502)
                    #expect(
                        answer.body.contains(
                            "cannot reach the upstream proxy https://***@127.0.0.1:\(relayPort): TLS failed"),
                        "\(answer.body)")
                }
            }
            let (forward, forwardPort) = try await Self.kakapo([
                "serve", "--proxy", "--intercept", "only.example", "--ca-dir", directory + "/ca", "--port", "0",
                "--upstream-ca", bothCAs, "--upstream-proxy", through,
            ])
            let tunnelled = try await Curl.run([
                "--proxy", "http://127.0.0.1:\(forwardPort)", "--cacert", secure.caCertificate,
                "https://127.0.0.1:\(secure.port)/hello/blind",
            ])
            _ = try await Self.stop(forward)
            #expect(tunnelled.body.contains(#""hello":"blind""#), "\(tunnelled.error)")
            #expect(
                proxy.log.components(separatedBy: "CONNECT 127.0.0.1:\(secure.port) HTTP/1.1").count == 4,
                "\(proxy.log)")
            relay.send(SIGKILL)
            try await secure.stop()
            try await proxy.stop()
        }
    }
}
