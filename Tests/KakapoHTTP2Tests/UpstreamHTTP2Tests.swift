import Foundation
import Kakapo
import KakapoTestSupport
import Synchronization
import Testing

/// Upstreams that speak HTTP/2 (tools/h2upstream.py on Python's `h2`, which tools/h2upstream.sh installs):
/// `h2c://` with prior knowledge and `https://` by ALPN, recorded and replayed through the built `kakapo` to
/// an HTTP/1.1 client, trailers and version included.
@Suite(
    "Upstreams over HTTP/2", .enabled(if: H2Upstream.isAvailable, "the venv has no h2: run tools/h2upstream.sh install")
)
struct UpstreamHTTP2Tests {
    @Test("an h2c:// upstream's trailers reach a client that takes them, are recorded with the version, and replay")
    func cleartextTrailersRecordedAndReplayed() async throws {
        let upstream = try await H2Upstream.start()
        let cassette = try Fixtures.temporaryDirectory() + "/h2c.json"
        let recorder = try KakapoProcess([
            "record", "--upstream", "h2c://127.0.0.1:\(upstream.port)", "--cassette", cassette, "--port", "0",
        ])
        let port = try await recorder.waitUntilListening()

        // Three pieces 150 ms apart and trailers, as a chunked HTTP/1.1 answer with them at its end.
        let streamed = try H2Upstream.get("/trailers", port: port, headers: ["TE: trailers"])
        #expect(streamed.hasPrefix("HTTP/1.1 200"), "\(streamed)")
        #expect(streamed.lowercased().contains("transfer-encoding: chunked"), "\(streamed)")
        #expect(streamed.contains("one\n") && streamed.contains("two\n") && streamed.contains("three\n"))
        #expect(streamed.hasSuffix("0\r\ngrpc-status: 0\r\nx-trailer: yes\r\n\r\n"), "\(streamed)")
        // Header names as HTTP/2 has them: lower case, not re-cased.
        #expect(streamed.contains("\r\ncontent-type: text/plain\r\n"), "\(streamed)")
        #expect(streamed.contains("\r\nx-upstream: h2\r\n"), "\(streamed)")

        // A body with a content-length still has its trailers; TE keeps only `trailers` on the way up.
        let echoed = try H2Upstream.get("/echo", port: port, headers: ["TE: trailers, deflate", "Connection: TE"])
        #expect(echoed.contains(#"["te", "trailers"]"#), "\(echoed)")
        #expect(echoed.hasSuffix("x-echo: done\r\n\r\n"), "\(echoed)")
        // A client that does not take trailers gets the body alone, with its length.
        let plainEcho = try H2Upstream.get("/echo?2", port: port, headers: ["TE: deflate"])
        #expect(!plainEcho.contains(#"["te""#), "\(plainEcho)")
        #expect(!plainEcho.contains("x-echo"), "\(plainEcho)")
        // Request after request to the same upstream (libcurl 7.88 cannot reuse an h2c connection).
        for round in 0..<3 {
            #expect(try H2Upstream.get("/plain?\(round)", port: port).hasSuffix("\r\n\r\nplain\n"))
        }

        recorder.send(SIGINT)
        #expect(try await recorder.waitForExit() == 0, "\(recorder.standardError)")
        let recorded = try H2Upstream.interactions(cassette)
        let trailers = try #require(recorded["/trailers"])
        #expect(trailers["httpVersion"] as? String == "2")
        #expect(trailers["trailers"] as? [[String]] == [["grpc-status", "0"], ["x-trailer", "yes"]])
        // Pieces of unknown length far enough apart are recorded with their offsets, to replay in time.
        let offsets = try #require((trailers["chunks"] as? [[String: Any]])?.compactMap { $0["offsetMs"] as? Double })
        #expect(offsets.count == 3 && offsets[1] >= 100 && offsets[2] >= offsets[1] + 100, "\(trailers)")
        #expect(recorded["/echo"]?["trailers"] as? [[String]] == [["x-echo", "done"]])
        #expect(recorded["/plain"]?["httpVersion"] as? String == "2")
        #expect(recorded["/plain"]?["trailers"] == nil)
        try await upstream.stop()

        let replayer = try KakapoProcess(["replay", "--cassette", cassette, "--port", "0"])
        let replayPort = try await replayer.waitUntilListening()
        let replayStarted = ContinuousClock.now
        let replayed = try H2Upstream.get("/trailers", port: replayPort, headers: ["TE: trailers"])
        #expect(ContinuousClock.now - replayStarted >= .milliseconds(200), "replayed at the recorded pace")
        #expect(replayed.contains("X-Kakapo-Source: cassette"), "\(replayed)")
        #expect(replayed.contains("one\n") && replayed.contains("three\n"), "\(replayed)")
        #expect(replayed.hasSuffix("0\r\ngrpc-status: 0\r\nx-trailer: yes\r\n\r\n"), "\(replayed)")
        let replayedEcho = try H2Upstream.get("/echo", port: replayPort, headers: ["TE: trailers"])
        #expect(replayedEcho.hasSuffix("x-echo: done\r\n\r\n"), "\(replayedEcho)")
        replayer.send(SIGINT)
        #expect(try await replayer.waitForExit() == 0)
    }

    @Test("trailers past 64 KiB or 128 fields fail the answer with a 502 that says so; the upstream stays usable")
    func trailersAreBounded() async throws {
        let upstream = try await H2Upstream.start()
        let proxy = try KakapoProcess([
            "serve", "--mode", "passthrough", "--upstream", "h2c://127.0.0.1:\(upstream.port)", "--port", "0",
        ])
        let port = try await proxy.waitUntilListening()
        // /huge-trailers is past libcurl's own bound too (128 KiB over HTTP/2): its refusal is nghttp2's
        // "-902: The user callback function failed", which must still read as the bound.
        for path in ["/big-trailers", "/many-trailers", "/huge-trailers"] {
            let answer = try H2Upstream.get(path, port: port, headers: ["TE: trailers"])
            #expect(answer.hasPrefix("HTTP/1.1 502"), "\(path): \(answer)")
            #expect(
                answer.contains(
                    "trailers from http://127.0.0.1:\(upstream.port)\(path) are larger than 65536 bytes or 128 fields"),
                "\(answer)")
            #expect(answer.contains("response-too-large"), "\(answer)")
            #expect(!answer.contains("nghttp2"), "\(answer)")
        }
        // A gRPC client over h2c gets the same reason as grpc-status 14 (UNAVAILABLE).
        let grpc = try await KakapoProcess.run(
            [
                "-sS", "-i", "--max-time", "20", "--http2-prior-knowledge", "-H", "content-type: application/grpc",
                "-H", "TE: trailers", "--data-binary", "", "http://127.0.0.1:\(port)/huge-trailers",
            ], executable: "/usr/bin/curl")
        #expect(grpc.output.contains("grpc-status: 14"), "\(grpc.output) \(grpc.error)")
        #expect(
            grpc.output.contains("trailers from http://127.0.0.1:\(upstream.port)/huge-trailers are larger than 65536"),
            "\(grpc.output)")
        #expect(try H2Upstream.get("/trailers", port: port, headers: ["TE: trailers"]).contains("x-trailer: yes"))
        // A streamed gRPC answer the upstream resets mid-way ends with UNAVAILABLE, not a reset a gRPC client
        // would read as its own CANCELLED.
        let broken = try await KakapoProcess.run(
            [
                "-sS", "-i", "--max-time", "20", "--http2-prior-knowledge", "-H", "content-type: application/grpc",
                "-H", "TE: trailers", "--data-binary", "", "http://127.0.0.1:\(port)/broken-stream",
            ], executable: "/usr/bin/curl")
        #expect(broken.output.contains("grpc-status: 14"), "\(broken.output) \(broken.error)")
        #expect(broken.output.contains("kakapo: the upstream broke the answer off"), "\(broken.output)")
        proxy.send(SIGINT)
        #expect(try await proxy.waitForExit() == 0)
    }

    @Test("an https:// upstream offering only h2 by ALPN is recorded as HTTP/2 with its trailers")
    func tlsNegotiatesHTTP2() async throws {
        let directory = try Fixtures.temporaryDirectory()
        let (certificate, key) = try await H2Upstream.certificate(in: directory)
        let upstream = try await H2Upstream.start(tls: (certificate, key))
        let cassette = directory + "/tls.json"
        let recorder = try KakapoProcess([
            "record", "--upstream", "https://127.0.0.1:\(upstream.port)", "--upstream-ca", directory + "/cert.pem",
            "--cassette", cassette, "--port", "0",
        ])
        let port = try await recorder.waitUntilListening()
        let streamed = try H2Upstream.get("/trailers", port: port, headers: ["TE: trailers"])
        #expect(streamed.hasSuffix("0\r\ngrpc-status: 0\r\nx-trailer: yes\r\n\r\n"), "\(streamed)")
        for round in 0..<2 {
            #expect(try H2Upstream.get("/plain?\(round)", port: port).hasSuffix("\r\n\r\nplain\n"))
        }
        recorder.send(SIGINT)
        #expect(try await recorder.waitForExit() == 0, "\(recorder.standardError)")
        let recorded = try H2Upstream.interactions(cassette)
        #expect(recorded["/trailers"]?["httpVersion"] as? String == "2")
        #expect(recorded["/trailers"]?["trailers"] as? [[String]] == [["grpc-status", "0"], ["x-trailer", "yes"]])
        #expect(recorded["/plain"]?["httpVersion"] as? String == "2")
    }

    @Test("--proxy records an https:// origin that speaks only h2 from a decrypted tunnel, trailers and version")
    func forwardProxyNegotiatesHTTP2() async throws {
        let directory = try Fixtures.temporaryDirectory()
        let (certificate, key) = try await H2Upstream.certificate(in: directory)
        let upstream = try await H2Upstream.start(tls: (certificate, key))
        let cassette = directory + "/forward.json"
        let recorder = try KakapoProcess([
            "record", "--proxy", "--ca-dir", directory + "/ca", "--upstream-ca", certificate, "--cassette", cassette,
            "--port", "0",
        ])
        let port = try await recorder.waitUntilListening()
        // curl speaks HTTP/1.1 inside the tunnel: what is checked here is Kakapo's side towards the origin.
        let curl = try KakapoProcess(
            [
                "-s", "--raw", "--http1.1", "-x", "http://127.0.0.1:\(port)", "--cacert",
                directory + "/ca/kakapo-ca.pem",
                "-H", "TE: trailers", "https://127.0.0.1:\(upstream.port)/trailers",
            ], executable: "/usr/bin/curl")
        #expect(try await curl.waitForExit() == 0, "\(curl.standardError)")
        #expect(
            curl.standardOutput.hasSuffix("0\r\ngrpc-status: 0\r\nx-trailer: yes\r\n\r\n"), "\(curl.standardOutput)")
        recorder.send(SIGINT)
        #expect(try await recorder.waitForExit() == 0, "\(recorder.standardError)")
        let recorded = try H2Upstream.interactions(cassette)["/trailers"]
        #expect(recorded?["httpVersion"] as? String == "2")
        #expect(recorded?["trailers"] as? [[String]] == [["grpc-status", "0"], ["x-trailer", "yes"]])
    }

    @Test(
        "an h2c:// upstream behind an HTTP proxy is reached through a CONNECT tunnel",
        .enabled(
            if: H2Upstream.tinyproxy != nil || ProcessInfo.processInfo.environment["CI"] == "true",
            "no tinyproxy: run tools/tinyproxy.sh install"))
    func cleartextThroughProxyTunnel() async throws {
        let tinyproxy = try #require(H2Upstream.tinyproxy, "no tinyproxy: run tools/tinyproxy.sh install")
        let upstream = try await H2Upstream.start()
        let directory = try Fixtures.temporaryDirectory()
        let proxyPort = try ClosedPort().port
        try """
        Port \(proxyPort)
        Listen 127.0.0.1
        Timeout 30
        LogFile "\(directory)/tinyproxy.log"
        LogLevel Connect
        Allow 127.0.0.1

        """.write(toFile: directory + "/tinyproxy.conf", atomically: true, encoding: .utf8)
        // Run as root (a container), tinyproxy keeps the current user; its log folder must be writable.
        chmod(directory, 0o777)
        let proxy = try KakapoProcess(["-d", "-c", directory + "/tinyproxy.conf"], executable: tinyproxy)
        // SIGKILL: the test runner's blocked SIGTERM passes to its children, and tinyproxy would wait out the
        // connections its clients keep alive anyway.
        defer { proxy.send(SIGKILL) }
        let deadline = ContinuousClock.now + .seconds(10)
        while (try? RawConnection(port: proxyPort, timeout: 1)) == nil {
            guard ContinuousClock.now < deadline else {
                Issue.record("tinyproxy did not listen: \(proxy.standardError)")
                return
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        let kakapo = try KakapoProcess([
            "serve", "--mode", "passthrough", "--upstream", "h2c://127.0.0.1:\(upstream.port)", "--upstream-proxy",
            "http://127.0.0.1:\(proxyPort)", "--port", "0",
        ])
        let port = try await kakapo.waitUntilListening()
        let answer = try H2Upstream.get("/trailers", port: port, headers: ["TE: trailers"])
        #expect(answer.hasSuffix("0\r\ngrpc-status: 0\r\nx-trailer: yes\r\n\r\n"), "\(answer)")
        let log = (try? String(contentsOfFile: directory + "/tinyproxy.log", encoding: .utf8)) ?? ""
        #expect(log.contains("CONNECT 127.0.0.1:\(upstream.port)"), "\(log)")
        kakapo.send(SIGINT)
        #expect(try await kakapo.waitForExit() == 0)
    }

    @Test("an HTTP/1.1 upstream is recorded as 1.1")
    func http1VersionRecorded() async throws {
        let upstream = try await TestUpstream.start { _ in .response(HTTP.Response(status: 200, body: Array("ok".utf8)))
        }
        let cassette = try Fixtures.temporaryDirectory() + "/h1.json"
        let recorder = try KakapoProcess([
            "record", "--upstream", "http://127.0.0.1:\(upstream.port)", "--cassette", cassette, "--port", "0",
        ])
        let port = try await recorder.waitUntilListening()
        #expect(try H2Upstream.get("/one", port: port).hasSuffix("\r\n\r\nok"))
        recorder.send(SIGINT)
        #expect(try await recorder.waitForExit() == 0)
        #expect(try H2Upstream.interactions(cassette)["/one"]?["httpVersion"] as? String == "1.1")
        await upstream.stop()
    }

    @Test("a chunked HTTP/1.1 upstream's trailers are kept and recorded too, with version 1.1")
    func chunkedHTTP1Trailers() async throws {
        let server = try KakapoProcess(["-c", H2Upstream.chunkedHTTP1Server], executable: H2Upstream.python)
        defer { server.send(SIGKILL) }
        let upstreamPort = try await server.waitUntilListening()
        let cassette = try Fixtures.temporaryDirectory() + "/h1-trailers.json"
        let recorder = try KakapoProcess([
            "record", "--upstream", "http://127.0.0.1:\(upstreamPort)", "--cassette", cassette, "--port", "0",
        ])
        let port = try await recorder.waitUntilListening()
        let answer = try H2Upstream.get("/chunked", port: port, headers: ["TE: trailers"])
        #expect(answer.contains("hello"), "\(answer)")
        #expect(answer.hasSuffix("0\r\nx-checksum: abc\r\n\r\n"), "\(answer)")
        recorder.send(SIGINT)
        #expect(try await recorder.waitForExit() == 0)
        let recorded = try #require(try H2Upstream.interactions(cassette)["/chunked"])
        #expect(recorded["httpVersion"] as? String == "1.1")
        #expect(recorded["trailers"] as? [[String]] == [["x-checksum", "abc"]], "\(recorded)")
    }

    @Test("--upstream takes h2c:// and says which schemes it takes")
    func upstreamSchemes() async throws {
        #expect(
            UpstreamURL("h2c://127.0.0.1:50051/api")?.url(for: "/demo.Greeter/SayHello")
                == "http://127.0.0.1:50051/api/demo.Greeter/SayHello")
        #expect(UpstreamURL("H2C://host")?.usesHTTP2PriorKnowledge == true)
        #expect(UpstreamURL("h2://host") == nil)
        let (status, _, error) = try await KakapoProcess.run([
            "record", "--upstream", "h2://127.0.0.1:1", "--cassette", "/tmp/unused.json", "--port", "0",
        ])
        #expect(status != 0)
        #expect(error.contains("http://, https:// or h2c://"), "\(error)")
    }

    @Test("TE goes upstream only as `trailers`, and only when the client listed it")
    func teTrailersOnly() {
        let forwarded = HopByHopHeaders.removing(fromRequest: [
            "Accept": "*/*", "TE": "deflate, trailers;q=1", "Connection": "TE",
        ])
        #expect(forwarded.fields.map { "\($0.name): \($0.value)" } == ["Accept: */*", "TE: trailers"])
        #expect(HopByHopHeaders.removing(fromRequest: ["te": "gzip", "X": "1"]).fields.map(\.name) == ["X"])
        #expect(HopByHopHeaders.removing(from: ["te": "trailers"]).isEmpty)
    }
}

/// tools/h2upstream.py running, and how tests talk to Kakapo in front of it.
final class H2Upstream: Sendable {
    let process: KakapoProcess
    let port: Int
    /// Set once `stop` has ended it.
    private let stopped = Mutex(false)

    private init(process: KakapoProcess, port: Int) {
        self.process = process
        self.port = port
    }

    /// A test must not leave it running, failed or not: SIGKILL, since the test runner's blocked SIGTERM
    /// passes to its children.
    deinit {
        if !stopped.withLock({ $0 }) { process.send(SIGKILL) }
    }

    /// Ends it, as an upstream that went away.
    func stop() async throws {
        stopped.withLock { $0 = true }
        process.send(SIGKILL)
        _ = try await process.waitForExit()
    }

    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path
    static let python = root + "/.build/python-venv/bin/python"

    /// Whether the venv has `h2`. Under CI (`CI=true`) always true, so a missing install fails the tests.
    static let isAvailable =
        ProcessInfo.processInfo.environment["CI"] == "true"
        || (try? KakapoProcess.runBlocking(["-c", "import h2.connection"], executable: python)) == 0

    /// An HTTP/1.1 server (`... listening on http://127.0.0.1:PORT`) answering every request with a chunked
    /// `hello` and the trailer `x-checksum: abc`.
    static let chunkedHTTP1Server = """
        import socket, threading
        def serve(connection):
            with connection:
                data = b""
                while b"\\r\\n\\r\\n" not in data:
                    more = connection.recv(65536)
                    if not more: return
                    data += more
                connection.sendall(b"HTTP/1.1 200 OK\\r\\nContent-Type: text/plain\\r\\nTrailer: x-checksum\\r\\n"
                    b"Transfer-Encoding: chunked\\r\\nConnection: close\\r\\n\\r\\n"
                    b"5\\r\\nhello\\r\\n0\\r\\nx-checksum: abc\\r\\n\\r\\n")
        listener = socket.socket()
        listener.bind(("127.0.0.1", 0))
        listener.listen(16)
        print(f"http/1.1 upstream listening on http://127.0.0.1:{listener.getsockname()[1]}", flush=True)
        while True:
            threading.Thread(target=serve, args=(listener.accept()[0],)).start()
        """

    /// Debian's tinyproxy (tools/tinyproxy.sh installs it), as the HTTP proxy in front of an upstream.
    static let tinyproxy = ["/usr/bin/tinyproxy", "/usr/sbin/tinyproxy"].first {
        FileManager.default.isExecutableFile(atPath: $0)
    }

    /// Starts the upstream on a free port: cleartext, or TLS offering only h2 with `tls` (certificate, key).
    static func start(tls: (String, String)? = nil) async throws -> H2Upstream {
        var arguments = [root + "/tools/h2upstream.py"]
        if let tls { arguments += ["--tls", tls.0, tls.1] }
        let process = try KakapoProcess(arguments, executable: python)
        return H2Upstream(process: process, port: try await process.waitUntilListening())
    }

    /// A self-signed certificate for 127.0.0.1 and localhost made with openssl in `directory`: its path
    /// and its key's.
    static func certificate(in directory: String) async throws -> (String, String) {
        let openssl = try KakapoProcess(
            [
                "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout",
                directory + "/key.pem", "-out", directory + "/cert.pem", "-days", "2", "-subj", "/CN=localhost",
                "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost",
            ], executable: "/usr/bin/openssl")
        #expect(try await openssl.waitForExit() == 0, "\(openssl.standardError)")
        return (directory + "/cert.pem", directory + "/key.pem")
    }

    /// GETs `path` over HTTP/1.1 on its own connection and returns everything Kakapo sent until it closed.
    static func get(_ path: String, port: Int, headers: [String] = []) throws -> String {
        let connection = try RawConnection(port: port, timeout: 10)
        let extra = headers.map { $0 + "\r\n" }.joined()
        connection.send("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n\(extra)Connection: close\r\n\r\n")
        return connection.receive().text
    }

    /// The cassette's interactions by request path (the last one for a path): each one's response object.
    static func interactions(_ cassette: String) throws -> [String: [String: Any]] {
        let data = try Data(contentsOf: URL(fileURLWithPath: cassette))
        let root = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let list = try #require(root["interactions"] as? [[String: Any]], "\(root.keys)")
        var byPath: [String: [String: Any]] = [:]
        for interaction in list {
            guard let request = interaction["request"] as? [String: Any],
                let response = interaction["response"] as? [String: Any],
                let url = request["url"] as? String
            else { continue }
            let path = URLComponents(string: url)?.path ?? url
            byPath[path] = response
        }
        return byPath
    }
}
