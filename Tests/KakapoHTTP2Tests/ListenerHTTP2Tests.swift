import Foundation
import KakapoTestSupport
import Testing

/// HTTP/2 on Kakapo's own wire, through the built `kakapo` and real clients: h2c with prior knowledge on the
/// cleartext port, h2 by ALPN on `--tls` and inside decrypted `--proxy` tunnels, HTTP/1.1 beside them.
/// One at a time: each starts several processes.
@Suite("HTTP/2 listener", .serialized)
struct ListenerHTTP2Tests {
    /// A routes file with a route and an echo, and a cassette with one recording, in a new folder.
    static func fixtures() throws -> (routes: String, cassette: String, directory: String) {
        let directory = try Fixtures.temporaryDirectory()
        let routes = directory + "/h2.routes.yaml"
        try """
        routes:
          - method: GET
            path: /hello/:name
            response:
              json: {hello: "{{params.name}}", host: "{{headers.host}}"}
          - method: POST
            path: /echo
            response:
              status: 201
              json: {got: "{{body.name}}"}
        """.write(toFile: routes, atomically: true, encoding: .utf8)
        let cassette = directory + "/users.json"
        try """
        {
          "version": 1,
          "interactions": [
            {
              "request": {"method": "GET", "url": "/users/1", "headers": [["Accept", "*/*"]]},
              "response": {
                "status": 200,
                "headers": [["Content-Type", "application/json"]],
                "body": {"json": {"id": "1", "name": "Ada Lovelace"}}
              },
              "recordedAt": "2026-11-24T10:00:00.000Z"
            }
          ]
        }
        """.write(toFile: cassette, atomically: true, encoding: .utf8)
        return (routes, cassette, directory)
    }

    @Test("curl with h2c prior knowledge gets replays, routes, a POST's answer, a miss's report and the journal")
    func priorKnowledge() async throws {
        let (routes, cassette, _) = try Self.fixtures()
        let server = try KakapoProcess([
            "replay", "--cassette", cassette, "--routes", routes, "--port", "0",
        ])
        let base = "http://127.0.0.1:\(try await server.waitUntilListening())"

        let replayed = try await H2Curl.run(["--http2-prior-knowledge", base + "/users/1"])
        #expect(replayed.version == "2", "\(replayed.error)")
        #expect(replayed.status == 200)
        #expect(replayed.source == "cassette")
        #expect(replayed.body.contains(#""name":"Ada Lovelace""#) || replayed.body.contains(#""name": "Ada Lovelace""#))

        let routed = try await H2Curl.run(["--http2-prior-knowledge", base + "/hello/kea"])
        #expect(routed.version == "2")
        // :authority becomes the Host the route reads.
        #expect(routed.body == #"{"hello":"kea","host":"\#(base.dropFirst(7))"}"#)
        #expect(routed.source == "route")

        let posted = try await H2Curl.run([
            "--http2-prior-knowledge", "-H", "content-type: application/json", "-d", #"{"name":"kiwi"}"#,
            base + "/echo",
        ])
        #expect(posted.version == "2")
        #expect(posted.status == 201)
        #expect(posted.body == #"{"got":"kiwi"}"#)

        let missed = try await H2Curl.run(["--http2-prior-knowledge", base + "/users/2"])
        #expect(missed.version == "2")
        #expect(missed.status == 404)
        #expect(missed.source == "miss")
        #expect(missed.body.contains(#""url": "/users/2""#), "\(missed.body)")

        // HTTP/1.1 on the same port, as before.
        let plain = try await H2Curl.run(["--http1.1", base + "/users/1"])
        #expect(plain.version == "1.1")
        #expect(plain.source == "cassette")

        let journal = try await H2Curl.run(["--http2-prior-knowledge", base + "/__kakapo/requests"])
        #expect(journal.version == "2")
        #expect(journal.body.contains("/users/2"), "\(journal.body)")
        #expect(journal.body.contains("/hello/kea"))

        server.send(SIGINT)
        #expect(try await server.waitForExit() == 0)
        #expect(server.standardError.contains("missed 1"), "\(server.standardError)")
        #expect(server.standardError.contains("HTTP/1.1 and HTTP/2 (h2c with prior knowledge)"))
    }

    @Test(
        "requests multiplexed on one h2c connection are each answered on their own stream",
        .enabled(if: H2Peer.isAvailable, "the venv has no h2: run tools/http2.sh install"))
    func multiplexed() async throws {
        let (routes, cassette, _) = try Self.fixtures()
        let server = try KakapoProcess(["replay", "--cassette", cassette, "--routes", routes, "--port", "0"])
        let port = try await server.waitUntilListening()
        let outcome = try await H2Peer.run(
            ["requests", "GET /users/1", "GET /hello/a", #"POST /echo {"name":"b"}"#, "GET /nowhere", "GET /hello/c"],
            port: port)
        #expect(outcome.goAway == nil, "\(outcome.raw)")
        #expect(outcome.streams[1]?.status == 200)
        #expect(outcome.streams[1]?.body.contains("Ada Lovelace") == true)
        #expect(outcome.streams[3]?.body.contains(#""hello":"a""#) == true)
        #expect(outcome.streams[5]?.status == 201)
        #expect(outcome.streams[5]?.body == #"{"got":"b"}"#)
        #expect(outcome.streams[7]?.status == 404)
        #expect(outcome.streams[9]?.body.contains(#""hello":"c""#) == true)
        // Header names go out in lower case, as HTTP/2 requires.
        #expect(outcome.streams[1]?.headers.contains { $0.0 == "x-kakapo-source" && $0.1 == "cassette" } == true)
        server.send(SIGINT)
        #expect(try await server.waitForExit() == 0)
    }

    @Test(
        "a body sent with no content-length is recorded and forwarded without a transfer coding",
        .enabled(if: H2Peer.isAvailable, "the venv has no h2: run tools/http2.sh install"))
    func unsizedBody() async throws {
        let (routes, _, directory) = try Self.fixtures()
        let upstream = try KakapoProcess(["serve", "--routes", routes, "--port", "0"])
        let upstreamPort = try await upstream.waitUntilListening()
        let cassette = directory + "/unsized.json"
        let recorder = try KakapoProcess([
            "record", "--upstream", "http://127.0.0.1:\(upstreamPort)", "--cassette", cassette, "--port", "0",
        ])
        let port = try await recorder.waitUntilListening()
        let outcome = try await H2Peer.run(["requests", #"POST* /echo {"name":"moa"}"#], port: port)
        #expect(outcome.streams[1]?.status == 201, "\(outcome.raw)")
        #expect(outcome.streams[1]?.body == #"{"got":"moa"}"#)
        recorder.send(SIGINT)
        #expect(try await recorder.waitForExit() == 0)
        upstream.send(SIGINT)
        _ = try await upstream.waitForExit()
        let saved = try String(contentsOfFile: cassette, encoding: .utf8)
        #expect(saved.contains(#""url": "/echo""#), "\(saved)")
        #expect(!saved.lowercased().contains("transfer-encoding"), "\(saved)")
    }

    @Test("the TLS listener offers h2 by ALPN, still answers HTTP/1.1, and --no-http2 offers HTTP/1.1 alone")
    func alpn() async throws {
        let (routes, _, directory) = try Self.fixtures()
        let server = try KakapoProcess([
            "serve", "--routes", routes, "--tls", "--ca-dir", directory + "/ca", "--port", "0",
        ])
        let base = "https://localhost:\(try await server.waitUntilListening())"
        let ca = directory + "/ca/kakapo-ca.pem"
        let h2 = try await H2Curl.run(["--http2", "--cacert", ca, base + "/hello/tls"])
        #expect(h2.version == "2", "\(h2.error)")
        #expect(h2.body.contains(#""hello":"tls""#))
        let h1 = try await H2Curl.run(["--http1.1", "--cacert", ca, base + "/hello/tls"])
        #expect(h1.version == "1.1")
        #expect(h1.body == h2.body)
        server.send(SIGINT)
        #expect(try await server.waitForExit() == 0)

        let withoutHTTP2 = try KakapoProcess([
            "serve", "--routes", routes, "--tls", "--ca-dir", directory + "/ca", "--port", "0", "--no-http2",
        ])
        let otherBase = "https://localhost:\(try await withoutHTTP2.waitUntilListening())"
        let fallback = try await H2Curl.run(["--http2", "--cacert", ca, otherBase + "/hello/tls"])
        #expect(fallback.version == "1.1", "\(fallback.error)")
        #expect(fallback.body.contains(#""hello":"tls""#))
        withoutHTTP2.send(SIGINT)
        #expect(try await withoutHTTP2.waitForExit() == 0)
    }

    @Test("without HTTP/2 a client with prior knowledge gets a clear 505, not a parser error")
    func priorKnowledgeRefused() async throws {
        let (routes, _, _) = try Self.fixtures()
        let server = try KakapoProcess(["serve", "--routes", routes, "--port", "0", "--no-http2"])
        let port = try await server.waitUntilListening()
        let connection = try RawConnection(port: port)
        connection.send("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")
        let (answer, closed) = connection.receive()
        #expect(closed)
        #expect(answer.hasPrefix("HTTP/1.1 505 HTTP Version Not Supported\r\n"), "\(answer)")
        #expect(answer.contains("HTTP/1.1 only"))
        let plain = try await H2Curl.run(["http://127.0.0.1:\(port)/hello/x"])
        #expect(plain.version == "1.1")
        server.send(SIGINT)
        #expect(try await server.waitForExit() == 0)
    }

    @Test("the forward proxy records h2 inside a decrypted tunnel and replays it with the upstream gone")
    func forwardProxy() async throws {
        let (routes, _, directory) = try Self.fixtures()
        let cassette = directory + "/proxied.json"
        let kakapoCA = directory + "/ca/kakapo-ca.pem"
        let upstream = try KakapoProcess([
            "serve", "--routes", routes, "--tls", "--ca-dir", directory + "/upstream-ca", "--port", "0",
        ])
        let upstreamPort = try await upstream.waitUntilListening()
        let recorder = try KakapoProcess([
            "record", "--proxy", "--cassette", cassette, "--ca-dir", directory + "/ca", "--upstream-ca",
            directory + "/upstream-ca/kakapo-ca.pem", "--port", "0",
        ])
        let proxy = "http://127.0.0.1:\(try await recorder.waitUntilListening())"
        let target = "https://localhost:\(upstreamPort)"
        let first = try await H2Curl.run(["--http2", "--proxy", proxy, "--cacert", kakapoCA, target + "/hello/fp"])
        #expect(first.version == "2", "\(first.error)")
        #expect(first.body == #"{"hello":"fp","host":"localhost:\#(upstreamPort)"}"#)
        #expect(first.source == "upstream")
        let posted = try await H2Curl.run([
            "--http2", "--proxy", proxy, "--cacert", kakapoCA, "-H", "content-type: application/json", "-d",
            #"{"name":"tui"}"#, target + "/echo",
        ])
        #expect(posted.version == "2")
        #expect(posted.status == 201)
        recorder.send(SIGINT)
        #expect(try await recorder.waitForExit() == 0)
        #expect(recorder.standardError.contains("recorded 2 interactions"), "\(recorder.standardError)")
        upstream.send(SIGTERM)
        _ = try await upstream.waitForExit()

        let replayer = try KakapoProcess([
            "replay", "--proxy", "--cassette", cassette, "--ca-dir", directory + "/ca", "--port", "0",
        ])
        let replayProxy = "http://127.0.0.1:\(try await replayer.waitUntilListening())"
        let replayed = try await H2Curl.run([
            "--http2", "--proxy", replayProxy, "--cacert", kakapoCA, target + "/hello/fp",
        ])
        #expect(replayed.version == "2", "\(replayed.error)")
        #expect(replayed.body == first.body)
        #expect(replayed.source == "cassette")
        let postedAgain = try await H2Curl.run([
            "--http2", "--proxy", replayProxy, "--cacert", kakapoCA, "-H", "content-type: application/json", "-d",
            #"{"name":"tui"}"#, target + "/echo",
        ])
        #expect(postedAgain.status == 201)
        #expect(postedAgain.body == posted.body)
        #expect(postedAgain.source == "cassette")
        replayer.send(SIGINT)
        #expect(try await replayer.waitForExit() == 0)
    }
}
