import Foundation
import KakapoHTTP
import KakapoTestSupport
import Testing

extension HTTPSTests {
    /// `--proxy-auth`: Kakapo's own forward proxy asks for credentials, tested with the built binary, curl
    /// (`--proxy-user`), and local HTTP and HTTPS upstreams.
    @Suite("Forward proxy credentials")
    struct ProxyAuthTests {
        static let user = "kea"
        static let password = "correct-horse-battery"
        static let good = "\(user):\(password)"
        /// What the password looks like on the wire and in any log that would dump a header.
        static let encoded = Data(good.utf8).base64EncodedString()

        /// What curl got: its exit status, the response status, headers and body, and its error output.
        struct Reply {
            let exit: Int32
            let status: Int
            let headers: String
            let body: String
            let error: String
        }

        /// `Curl.run`, keeping the response headers too (the later `-D` wins).
        static func curl(_ arguments: [String]) async throws -> Reply {
            let headers = try Fixtures.temporaryDirectory() + "/response-headers.txt"
            let result = try await Curl.run(arguments + ["-D", headers])
            return Reply(
                exit: result.status, status: result.httpStatus,
                headers: (try? String(contentsOfFile: headers, encoding: .utf8)) ?? "", body: result.body,
                error: result.error)
        }

        /// A file holding the credentials, as `--proxy-auth-file` reads them.
        static func secretFile(_ directory: String) throws -> String {
            let path = directory + "/proxy-auth"
            try "  \(good)  \nsecond line ignored\n".write(toFile: path, atomically: true, encoding: .utf8)
            return path
        }

        static func expectChallenge(_ reply: Reply, _ comment: Comment? = nil) {
            #expect(reply.status == 407, comment)
            #expect(reply.headers.contains("Proxy-Authenticate: Basic realm=\"kakapo\""), comment)
            #expect(reply.body.contains("\"error\""), comment)
        }

        @Test(
            "record --proxy --proxy-auth-file: 407 without valid credentials (http, https, WebSocket, an upload), nothing forwarded; with them both recorded; the password nowhere"
        )
        func recordWithCredentials() async throws {
            let directory = try Fixtures.temporaryDirectory()
            let cassette = directory + "/hosts.json"
            let kakapoCA = directory + "/ca/kakapo-ca.pem"
            let secure = try await HTTPSUpstream.start()
            let plain = try await TestUpstream.start { request in
                let credentials = request.headers["Proxy-Authorization"] ?? "none"
                return .response(
                    HTTP.Response(
                        status: 200, contentType: "application/json", text: #"{"credentials":"\#(credentials)"}"#))
            }
            let recorder = try KakapoProcess([
                "record", "--proxy", "--proxy-auth-file", try Self.secretFile(directory), "--cassette", cassette,
                "--ca-dir", directory + "/ca", "--upstream-ca", secure.caCertificate, "--verbose", "--port", "0",
            ])
            let port = try await recorder.waitUntilListening()
            let proxy = "http://127.0.0.1:\(port)"
            let https = "https://localhost:\(secure.port)/hello/a"

            Self.expectChallenge(try await Self.curl(["--proxy", proxy, "\(plain.baseURL)/users/1"]), "plain, none")
            Self.expectChallenge(
                try await Self.curl(["--proxy", proxy, "-d", #"{"name":"kiwi"}"#, "\(plain.baseURL)/users"]),
                "an upload")
            Self.expectChallenge(
                try await Self.curl([
                    "--proxy", proxy, "--proxy-user", "\(Self.user):wrong-horse-battery", "\(plain.baseURL)/users/1",
                ]), "plain, wrong password")
            Self.expectChallenge(
                try await Self.curl([
                    "--proxy", proxy, "--proxy-user", "kiwi:\(Self.password)", "\(plain.baseURL)/users/1",
                ]), "plain, wrong user")
            Self.expectChallenge(
                try await Self.curl([
                    "--proxy", proxy, "-H", "Connection: Upgrade", "-H", "Upgrade: websocket", "-H",
                    "Sec-WebSocket-Version: 13", "-H", "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==",
                    "\(plain.baseURL)/socket",
                ]), "a WebSocket upgrade")
            for credentials in [[], ["--proxy-user", "\(Self.user):wrong-horse-battery"]] {
                let tunnel = try await Self.curl(["--proxy", proxy, "--cacert", kakapoCA] + credentials + [https])
                #expect(tunnel.exit != 0)
                #expect(tunnel.error.contains("407"), "\(tunnel.error)")
            }
            #expect(plain.received.isEmpty, "nothing reached the upstream")
            // The admin API is not a proxy request: loopback is enough, as before.
            let health = try await Self.curl(["http://127.0.0.1:\(port)/__kakapo/health"])
            #expect(health.status == 200)

            let authorised = ["--proxy", proxy, "--proxy-user", Self.good]
            let first = try await Self.curl(authorised + ["\(plain.baseURL)/users/1"])
            #expect(first.status == 200)
            #expect(first.body == #"{"credentials":"none"}"#, "Proxy-Authorization is not forwarded")
            let second = try await Self.curl(authorised + ["--cacert", kakapoCA, https])
            #expect(second.exit == 0, "\(second.error)")
            #expect(second.body == #"{"hello":"a","host":"localhost:\#(secure.port)"}"#)
            recorder.send(SIGINT)
            #expect(try await recorder.waitForExit() == 0)
            #expect(recorder.standardError.contains("recorded 2 interactions"), "\(recorder.standardError)")
            #expect(recorder.standardError.contains("refused CONNECT localhost:\(secure.port): no proxy credentials"))
            try await secure.stop()
            await plain.stop()

            let saved = try String(contentsOfFile: cassette, encoding: .utf8)
            #expect(saved.contains(#""url": "http://127.0.0.1:\#(plain.port)/users/1""#))
            #expect(saved.contains(#""url": "https://localhost:\#(secure.port)/hello/a""#))
            for secret in [Self.password, Self.encoded] {
                #expect(!saved.contains(secret), "the cassette holds \(secret)")
                #expect(!recorder.standardError.contains(secret), "the log holds \(secret)")
                #expect(!recorder.standardOutput.contains(secret), "the output holds \(secret)")
            }
        }

        @Test("passthrough with --intercept: a blind tunnel and a plain request need the credentials too")
        func blindTunnel() async throws {
            let directory = try Fixtures.temporaryDirectory()
            let secure = try await HTTPSUpstream.start()
            let plain = try await TestUpstream.start { _ in
                .response(HTTP.Response(status: 200, contentType: "text/plain", text: "plain"))
            }
            let process = try KakapoProcess([
                "serve", "--proxy", "--proxy-auth", Self.good, "--intercept", "other.example", "--ca-dir",
                directory + "/ca", "--port", "0",
            ])
            let proxy = "http://127.0.0.1:\(try await process.waitUntilListening())"
            let target = "https://localhost:\(secure.port)/hello/tunnel"
            let refused = try await Self.curl(["--proxy", proxy, "--cacert", secure.caCertificate, target])
            #expect(refused.exit != 0)
            #expect(refused.error.contains("407"), "\(refused.error)")
            Self.expectChallenge(try await Self.curl(["--proxy", proxy, "\(plain.baseURL)/plain"]))
            let through = try await Self.curl([
                "--proxy", proxy, "--proxy-user", Self.good, "--cacert", secure.caCertificate, target,
            ])
            #expect(through.exit == 0, "\(through.error)")
            #expect(through.body == #"{"hello":"tunnel","host":"localhost:\#(secure.port)"}"#)
            let plainThrough = try await Self.curl(["--proxy", proxy, "--proxy-user", Self.good, "\(plain.baseURL)/p"])
            #expect(plainThrough.body == "plain")
            process.send(SIGINT)
            #expect(try await process.waitForExit() == 0)
            try await secure.stop()
            await plain.stop()
        }

        @Test("a session is named with the credentials (USER+ID:PASSWORD); the session id alone is refused")
        func sessionWithCredentials() async throws {
            let directory = try Fixtures.temporaryDirectory()
            let cassettes = directory + "/cassettes"
            try FileManager.default.createDirectory(atPath: cassettes, withIntermediateDirectories: true)
            let kakapoCA = directory + "/ca/kakapo-ca.pem"
            let secure = try await HTTPSUpstream.start()
            let plain = try await TestUpstream.start { _ in
                .response(HTTP.Response(status: 200, contentType: "text/plain", text: "plain"))
            }
            let process = try KakapoProcess([
                "serve", "--proxy", "--cassette-dir", cassettes, "--proxy-auth-file", try Self.secretFile(directory),
                "--ca-dir", directory + "/ca", "--upstream-ca", secure.caCertificate, "--port", "0",
            ])
            let port = try await process.waitUntilListening()
            let proxy = "http://127.0.0.1:\(port)"
            let opened = try await Self.curl([
                "-X", "POST", "-H", "Content-Type: application/json", "--data",
                #"{"cassette": "tls/hello.json", "mode": "new"}"#, "\(proxy)/__kakapo/sessions",
            ])
            #expect(opened.status == 201, "\(opened.body)")
            let answer = try JSONSerialization.jsonObject(with: Data(opened.body.utf8)) as? [String: Any]
            let id = try #require(answer?["id"] as? String)
            // The proxy URL the answer hands out names the user and the session, never the password.
            #expect(answer?["proxy"] as? String == "http://\(Self.user)+\(id)@127.0.0.1:\(port)")
            let target = "https://localhost:\(secure.port)/hello/kea"

            let recorded = try await Self.curl([
                "--proxy", proxy, "--proxy-user", "\(Self.user)+\(id):\(Self.password)", "--cacert", kakapoCA, target,
            ])
            #expect(recorded.exit == 0, "\(recorded.error)")
            #expect(recorded.body == #"{"hello":"kea","host":"localhost:\#(secure.port)"}"#)
            let plainRecorded = try await Self.curl([
                "--proxy", proxy, "--proxy-user", "\(Self.user)+\(id):\(Self.password)", "\(plain.baseURL)/p",
            ])
            #expect(plainRecorded.body == "plain")
            #expect(plain.received.first?.headers["X-Kakapo-Session"] == nil)
            // Without --proxy-auth the id alone names the session; with it, that is no credential.
            let idAlone = try await Self.curl([
                "--proxy", "http://\(id):@127.0.0.1:\(port)", "--cacert", kakapoCA, target,
            ])
            #expect(idAlone.exit != 0)
            #expect(idAlone.error.contains("407"), "\(idAlone.error)")
            let unknown = try await Self.curl([
                "--proxy", proxy, "--proxy-user", "\(Self.user)+0000000000000000:\(Self.password)", "--cacert",
                kakapoCA, target,
            ])
            #expect(unknown.exit != 0)
            #expect(unknown.error.contains("404"), "\(unknown.error)")
            let closed = try await Self.curl(["-X", "DELETE", "\(proxy)/__kakapo/sessions/\(id)"])
            #expect(closed.body.contains(#""recorded": 2"#), "\(closed.body)")
            process.send(SIGINT)
            #expect(try await process.waitForExit() == 0)
            try await secure.stop()
            await plain.stop()

            let saved = try String(contentsOfFile: cassettes + "/tls/hello.json", encoding: .utf8)
            #expect(saved.contains(#""url": "https://localhost:\#(secure.port)/hello/kea""#))
            #expect(saved.contains(#""url": "http://127.0.0.1:\#(plain.port)/p""#))
            #expect(!saved.contains(Self.password))
            #expect(!saved.contains(id), "the session id is not recorded either")
        }

        @Test("usage errors: --proxy-auth without --proxy, malformed or weak credentials, both flags, no file")
        func usageErrors() async throws {
            let directory = try Fixtures.temporaryDirectory()
            let file = try Self.secretFile(directory)
            let cases: [([String], String)] = [
                (["--proxy-auth", Self.good], "--proxy-auth only applies to the forward proxy: add --proxy"),
                (["--proxy-auth-file", file], "--proxy-auth-file only applies to the forward proxy: add --proxy"),
                (["--proxy", "--proxy-auth", "kea"], "--proxy-auth takes USER:PASSWORD"),
                (["--proxy", "--proxy-auth", ":\(Self.password)"], "with a user name before the ':'"),
                (["--proxy", "--proxy-auth", "kea:seven77"], "at least 8 characters"),
                (["--proxy", "--proxy-auth", "kea:correct\u{7}horse"], "control characters"),
                (["--proxy", "--proxy-auth", Self.good, "--proxy-auth-file", file], "cannot be given together"),
                (["--proxy", "--proxy-auth-file", directory + "/none"], "--proxy-auth-file: cannot read"),
            ]
            for (arguments, message) in cases {
                let result = try await KakapoProcess.run(["serve", "--port", "0"] + arguments)
                #expect(result.status == 2, "\(arguments)")
                #expect(result.error.contains(message), "\(arguments): \(result.error)")
                #expect(!result.error.contains("seven77") && !result.error.contains("correct"), "echoes the password")
            }
            let help = try await KakapoProcess.run(["serve", "--help"])
            #expect(help.output.contains("--proxy-auth-file"))
        }
    }
}
