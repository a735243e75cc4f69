import Foundation
import Kakapo
import KakapoTestSupport
import Testing

/// `--record-only` and `--passthrough` through the built binary, with curl and real upstreams.
@Suite("Command line: record filters")
struct RecordFilterCLITests {
    /// The request URLs recorded in the cassette at `path`, in order.
    static func recordedURLs(_ path: String) throws -> [String] {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        let cassette = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let interactions = try #require(cassette["interactions"] as? [[String: Any]])
        return interactions.compactMap { ($0["request"] as? [String: Any])?["url"] as? String }
    }

    @Test("forward mode: only the --record-only host is recorded; the other is answered live as passthrough")
    func forwardRecordOnly() async throws {
        let directory = try Fixtures.temporaryDirectory()
        let cassette = directory + "/two-hosts.json"
        let kept = try await CLITests.upstream()
        let other = try await CLITests.upstream()
        let recorder = try KakapoProcess([
            "record", "--proxy", "--ca-dir", directory + "/ca", "--cassette", cassette, "--port", "0",
            "--record-only", "127.0.0.1:\(kept.port)/**",
        ])
        let proxy = "http://127.0.0.1:\(try await recorder.waitUntilListening())"
        let recorded = try await SessionCLITests.curl(["-x", proxy, "http://127.0.0.1:\(kept.port)/kept"])
        #expect(recorded.body == #"{"path":"/kept"}"#)
        #expect(recorded.source == "upstream")
        for _ in 0..<2 {
            let passed = try await SessionCLITests.curl(["-x", proxy, "http://127.0.0.1:\(other.port)/other"])
            #expect(passed.body == #"{"path":"/other"}"#)
            #expect(passed.source == "passthrough")
        }
        // Answered live both times: the upstream saw each call.
        #expect(other.received.count == 2)
        let journal = try await SessionCLITests.curl([proxy + "/__kakapo/requests"])
        #expect(journal.body.contains(#""passthrough": 2"#), "\(journal.body)")
        #expect(journal.body.contains(#""source": "passthrough""#))
        recorder.send(SIGINT)
        #expect(try await recorder.waitForExit() == 0)
        #expect(recorder.standardError.contains("recorded 1 interaction to"), "\(recorder.standardError)")
        #expect(recorder.standardError.contains("2 requests passed through unrecorded (--record-only/--passthrough)"))
        #expect(try Self.recordedURLs(cassette) == ["http://127.0.0.1:\(kept.port)/kept"])
        await kept.stop()
        await other.stop()
    }

    @Test("forward mode: a decrypted tunnel is matched on its own origin (scheme, host and path)")
    func decryptedTunnel() async throws {
        let directory = try Fixtures.temporaryDirectory()
        let cassette = directory + "/tunnel.json"
        let secure = try await SessionCLITests.httpsUpstream(in: directory)
        let plain = try await CLITests.upstream()
        let recorder = try KakapoProcess([
            "record", "--proxy", "--ca-dir", directory + "/ca", "--upstream-ca", secure.ca, "--cassette", cassette,
            "--port", "0", "--passthrough", "https://localhost/hello/**",
        ])
        let proxy = "http://127.0.0.1:\(try await recorder.waitUntilListening())"
        let kakapoCA = directory + "/ca/kakapo-ca.pem"
        let passed = try await SessionCLITests.curl([
            "-x", proxy, "--cacert", kakapoCA, "https://localhost:\(secure.port)/hello/kea",
        ])
        #expect(passed.body == #"{"hello":"kea"}"#)
        #expect(passed.source == "passthrough")
        let recorded = try await SessionCLITests.curl(["-x", proxy, "http://localhost:\(plain.port)/hello/kea"])
        #expect(recorded.source == "upstream")
        recorder.send(SIGINT)
        #expect(try await recorder.waitForExit() == 0)
        #expect(try Self.recordedURLs(cassette) == ["http://localhost:\(plain.port)/hello/kea"])
        secure.process.send(SIGTERM)
        _ = try await secure.process.waitForExit()
        await plain.stop()
    }

    @Test("reverse mode: --passthrough /health/** is forwarded every time, never recorded nor replayed in mode new")
    func reversePassthrough() async throws {
        let directory = try Fixtures.temporaryDirectory()
        let cassette = directory + "/health.json"
        let upstream = try await CLITests.upstream()
        // A cassette that already holds /health and /users/1.
        let first = try KakapoProcess([
            "record", "--upstream", upstream.baseURL, "--cassette", cassette, "--port", "0",
        ])
        let firstPort = try await first.waitUntilListening()
        for path in ["/health", "/users/1"] {
            #expect(try await SessionCLITests.curl(["http://127.0.0.1:\(firstPort)\(path)"]).source == "upstream")
        }
        first.send(SIGINT)
        #expect(try await first.waitForExit() == 0)
        #expect(upstream.received.count == 2)

        let recorder = try KakapoProcess([
            "record", "--mode", "new", "--upstream", upstream.baseURL, "--cassette", cassette, "--port", "0",
            "--passthrough", "127.0.0.1/health/**",
        ])
        let port = try await recorder.waitUntilListening()
        for _ in 0..<3 {
            let health = try await SessionCLITests.curl(["http://127.0.0.1:\(port)/health"])
            #expect(health.source == "passthrough")
            #expect(health.body == #"{"path":"/health"}"#)
        }
        #expect(try await SessionCLITests.curl(["http://127.0.0.1:\(port)/health/deep"]).source == "passthrough")
        #expect(try await SessionCLITests.curl(["http://127.0.0.1:\(port)/users/1"]).source == "cassette")
        #expect(try await SessionCLITests.curl(["http://127.0.0.1:\(port)/users/2"]).source == "upstream")
        // Three /health and one /health/deep forwarded live, /users/2 recorded; /users/1 replayed.
        #expect(
            upstream.received.map(\.path).suffix(5) == ["/health", "/health", "/health", "/health/deep", "/users/2"])
        recorder.send(SIGINT)
        #expect(try await recorder.waitForExit() == 0)
        #expect(recorder.standardError.contains("4 requests passed through unrecorded"), "\(recorder.standardError)")
        #expect(recorder.standardError.contains("recorded 1 interaction to"))
        #expect(try Self.recordedURLs(cassette) == ["/health", "/users/1", "/users/2"])

        // Replay ignores the filter: /health comes from the cassette.
        let replay = try KakapoProcess([
            "replay", "--cassette", cassette, "--port", "0", "--passthrough", "/health/**",
        ])
        let replayPort = try await replay.waitUntilListening()
        #expect(try await SessionCLITests.curl(["http://127.0.0.1:\(replayPort)/health"]).source == "cassette")
        replay.send(SIGINT)
        #expect(try await replay.waitForExit() == 0)
        #expect(!replay.standardError.contains("passed through"))
        await upstream.stop()
    }

    @Test("dot-segments are resolved before matching, as libcurl resolves them on the way upstream")
    func dotSegments() async throws {
        let directory = try Fixtures.temporaryDirectory()
        let cassette = directory + "/dots.json"
        let upstream = try await CLITests.upstream()
        let recorder = try KakapoProcess([
            "record", "--mode", "new", "--upstream", upstream.baseURL, "--cassette", cassette, "--port", "0",
            "--record-only", "127.0.0.1/x/**", "--passthrough", "127.0.0.1/x/secret/**",
        ])
        let kakapo = "http://127.0.0.1:\(try await recorder.waitUntilListening())"
        // (sent as, upstream receives, source): /x/.. escapes --record-only, /a/.. reaches --passthrough, and
        // /y/.. leads into /x. `%2e%2e` goes upstream as it is, but many servers resolve it: either reading
        // that keeps a request out keeps it out.
        let cases = [
            ("/x/../y/1", "/y/1", "passthrough"), ("/x/a/../secret/2", "/x/secret/2", "passthrough"),
            ("/y/../x/3", "/x/3", "upstream"), ("/x/%2e%2e/y/4", "/x/%2e%2e/y/4", "passthrough"),
            ("/x/./5", "/x/5", "upstream"),
        ]
        for (sent, received, source) in cases {
            let answer = try await SessionCLITests.curl(["--path-as-is", kakapo + sent])
            #expect(answer.body == #"{"path":"\#(received)"}"#, "\(sent)")
            #expect(answer.source == source, "\(sent)")
        }
        recorder.send(SIGINT)
        #expect(try await recorder.waitForExit() == 0)
        #expect(recorder.standardError.contains("3 requests passed through unrecorded"), "\(recorder.standardError)")
        #expect(try Self.recordedURLs(cassette) == ["/y/../x/3", "/x/./5"])
        await upstream.stop()
    }

    @Test(
        "a pattern that is not one is a usage error naming the flag and the pattern",
        arguments: [
            ("--record-only", "api.example.com?x=1"), ("--passthrough", "api.*.com"),
            ("--passthrough", "h.test/v*/users"), ("--record-only", "h.test:99999"),
        ])
    func badPattern(_ flag: String, _ pattern: String) async throws {
        let result = try await KakapoProcess.run([
            "record", "--upstream", "http://127.0.0.1:9", "--cassette", "/tmp/never.json", "--port", "0", flag,
            pattern,
        ])
        #expect(result.status == 2)
        #expect(result.error.contains("\(flag) \"\(pattern)\""), "\(result.error)")
    }
}
