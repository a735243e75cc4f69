import Foundation
import KakapoHTTP
import KakapoTestSupport
import Testing

extension HTTPSTests {
    /// Clients other than curl set up the way their users set them up: URLSession with its proxy settings,
    /// Python requests with `proxies=` and `verify=`.
    @Suite("Forward proxy with URLSession and Python")
    struct OtherClientTests {
        @Test("URLSession with Kakapo as its proxy records and replays through it")
        func urlSession() async throws {
            let directory = try Fixtures.temporaryDirectory()
            let cassette = directory + "/session.json"
            let upstream = try await TestUpstream.start { request in
                .response(
                    HTTP.Response(status: 200, contentType: "application/json", text: #"{"seen":"\#(request.path)"}"#))
            }
            for command in ["record", "replay"] {
                if command == "replay" { await upstream.stop() }
                let proxyProcess = try KakapoProcess([
                    command, "--proxy", "--cassette", cassette, "--ca-dir", directory + "/ca", "--port", "0",
                ])
                let port = try await proxyProcess.waitUntilListening()
                let probe = try await KakapoProcess.run(
                    [
                        "http_proxy=http://127.0.0.1:\(port)", KakapoProcess.builtProduct("kakapo-urlsession-probe"),
                        String(port), "\(upstream.baseURL)/through/session",
                    ], executable: "/usr/bin/env")
                #expect(probe.status == 0, "\(probe.error)")
                let source = command == "record" ? "upstream" : "cassette"
                #expect(probe.output == #"200 \#(source) {"seen":"/through/session"}"# + "\n")
                proxyProcess.send(SIGINT)
                #expect(try await proxyProcess.waitForExit() == 0)
            }
            let saved = try String(contentsOfFile: cassette, encoding: .utf8)
            #expect(saved.contains(#""url": "http://127.0.0.1:\#(upstream.port)/through/session""#))
        }

        static let hasPythonRequests: Bool =
            (try? KakapoProcess.runBlocking(["python3", "-c", "import requests"], executable: "/usr/bin/env")) == 0

        @Test(
            "Python requests with proxies= and verify= Kakapo's CA records HTTPS, then replays it with the upstream gone",
            .enabled(if: hasPythonRequests, "python3 with requests is not installed"))
        func pythonRequests() async throws {
            let directory = try Fixtures.temporaryDirectory()
            let cassette = directory + "/python.json"
            let secure = try await HTTPSUpstream.start()
            let script = """
                import sys, requests
                proxy = sys.argv[1]
                r = requests.get(sys.argv[2], proxies={"https": proxy, "http": proxy}, verify=sys.argv[3], timeout=20)
                print(r.status_code, r.headers.get("X-Kakapo-Source"), r.text)
                """
            for command in ["record", "replay"] {
                var arguments = [
                    command, "--proxy", "--cassette", cassette, "--ca-dir", directory + "/ca", "--port", "0",
                ]
                if command == "record" {
                    arguments += ["--upstream-ca", secure.caCertificate]
                } else {
                    try await secure.stop()
                }
                let proxyProcess = try KakapoProcess(arguments)
                let port = try await proxyProcess.waitUntilListening()
                let result = try await KakapoProcess.run(
                    [
                        "python3", "-c", script, "http://127.0.0.1:\(port)",
                        "https://localhost:\(secure.port)/hello/py",
                        directory + "/ca/kakapo-ca.pem",
                    ], executable: "/usr/bin/env")
                #expect(result.status == 0, "\(result.error)")
                let source = command == "record" ? "upstream" : "cassette"
                #expect(result.output == #"200 \#(source) {"hello":"py","host":"localhost:\#(secure.port)"}"# + "\n")
                proxyProcess.send(SIGINT)
                #expect(try await proxyProcess.waitForExit() == 0)
            }
        }
    }
}
