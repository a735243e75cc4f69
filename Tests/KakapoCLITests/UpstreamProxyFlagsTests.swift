import Foundation
import KakapoHTTP
import KakapoTestSupport
import Testing

@Suite("Command line: upstream proxy flags")
struct UpstreamProxyFlagsTests {
    @Test("an unusable --upstream-proxy, --no-proxy or HTTPS_PROXY is a usage error that hides the credentials")
    func refusesBadValues() async throws {
        let cassette = try Fixtures.temporaryDirectory() + "/c.json"
        let base = ["record", "--upstream", "http://127.0.0.1:1", "--cassette", cassette, "--port", "0"]
        let cases: [(arguments: [String], message: String)] = [
            (["--upstream-proxy", "socks5://carol:hunter2@proxy:1080"], "must be an http:// or https:// URL"),
            (["--upstream-proxy", "http://carol:hunter2@proxy:3128/path"], "\"http://***@proxy:3128/path\""),
            (["--upstream-proxy", "http://carol:hun/ter2@proxy:3128/path"], "\"http://***@proxy:3128/path\""),
            (["--upstream-proxy", "carol:h?u#n/ter2@x@proxy:99999"], "\"***@proxy:99999\""),
            (["--no-proxy", "10.0.0.0/40"], "--no-proxy: \"10.0.0.0/40\" is not a CIDR range"),
            (
                ["--upstream-proxy", "http://proxy:3128", "--ignore-env-proxy"],
                "--upstream-proxy already overrides the environment"
            ),
        ]
        for item in cases {
            let result = try await KakapoProcess.run(base + item.arguments)
            #expect(result.status == 2, "\(item.arguments): \(result.error)")
            #expect(result.error.contains(item.message), "\(result.error)")
            #expect(!result.error.contains("hunter2") && !result.error.contains("ter2"))
        }
        let environment = try await KakapoProcess.run(
            ["HTTPS_PROXY=ftp://carol:hunter2@proxy:21", KakapoProcess.binary] + base, executable: "/usr/bin/env")
        #expect(environment.status != 0)
        #expect(
            environment.error.contains("HTTPS_PROXY: the upstream proxy \"ftp://***@proxy:21\""), "\(environment.error)"
        )
        #expect(!environment.error.contains("hunter2"))
        let slashed = try await KakapoProcess.run(
            ["HTTPS_PROXY=http://carol:hun/ter2@proxy:3128/x", KakapoProcess.binary] + base, executable: "/usr/bin/env")
        #expect(slashed.status != 0)
        #expect(
            slashed.error.contains("HTTPS_PROXY: the upstream proxy \"http://***@proxy:3128/x\" must not have a path"),
            "\(slashed.error)")
        #expect(!slashed.error.contains("ter2"))
    }

    @Test(
        "in forward mode an HTTP_PROXY that is Kakapo's own address is ignored with a warning, and requests go direct")
    func forwardProxyIgnoresItself() async throws {
        let upstream = try await TestUpstream.start { _ in
            .response(HTTP.Response(status: 200, contentType: "text/plain", text: "direct"))
        }
        let port = try ClosedPort().port
        let process = try KakapoProcess(
            [
                "HTTP_PROXY=http://localhost:\(port)", KakapoProcess.binary, "serve", "--proxy", "--ca-dir",
                try Fixtures.temporaryDirectory() + "/ca", "--port", String(port),
            ], executable: "/usr/bin/env")
        #expect(try await process.waitUntilListening() == port)
        let answer = try await KakapoProcess.run(
            ["-sS", "--max-time", "10", "--proxy", "http://127.0.0.1:\(port)", upstream.baseURL + "/x"],
            executable: "/usr/bin/curl")
        #expect(answer.output == "direct", "\(answer.error)")
        process.send(SIGINT)
        #expect(try await process.waitForExit() == 0)
        #expect(
            process.standardError.contains(
                "ignoring the upstream proxy http://localhost:\(port) from HTTP_PROXY for http upstreams: it is Kakapo's own address"
            ), "\(process.standardError)")
        await upstream.stop()
    }
}
