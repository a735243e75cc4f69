import Foundation
import KakapoTestSupport
import Testing

/// Signatures over `Host` in reverse mode (issue 41): an upstream that checks a SigV4-style HMAC over the
/// method, the path and the `Host` it receives, a client that signs for Kakapo's address, and the built
/// `kakapo` between them, without and with `--preserve-host`, and as a forward proxy.
@Suite("Command line: signed requests through reverse and forward mode")
struct SignedHostTests {
    static let python = CLITests.packageRoot + "/.build/python-venv/bin/python"

    /// An S3-shaped upstream on 127.0.0.1 port 0: a request signed in its `Authorization`
    /// (`AWS4-HMAC-SHA256 ... Signature=HEX`) or query (`X-Amz-Signature=HEX`) gets 200 when HEX is the
    /// HMAC-SHA256 of `METHOD\nPATH\nHOST` with the shared key over the `Host` it received, else 403
    /// `SignatureDoesNotMatch`; an unsigned request gets 200.
    static let upstream = """
        import hashlib, hmac, sys, urllib.parse
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
        KEY = b"kakapo-test-secret"
        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            def answer(self):
                url = urllib.parse.urlsplit(self.path)
                query = dict(urllib.parse.parse_qsl(url.query))
                authorization = self.headers.get("Authorization", "")
                host = self.headers.get("Host", "")
                given = query.get("X-Amz-Signature")
                if given is None and "Signature=" in authorization:
                    given = authorization.rsplit("Signature=", 1)[1]
                length = int(self.headers.get("Content-Length") or 0)
                if length:
                    self.rfile.read(length)
                expected = hmac.new(KEY, f"{self.command}\\n{url.path}\\n{host}".encode(), hashlib.sha256).hexdigest()
                if given is None:
                    status, text = 200, f"public {url.path}"
                elif hmac.compare_digest(given, expected):
                    status, text = 200, f"{self.command} {url.path} signed for {host}"
                else:
                    status, text = 403, "<Error><Code>SignatureDoesNotMatch</Code></Error>"
                body = text.encode()
                self.send_response(status)
                self.send_header("Content-Type", "text/plain")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            do_GET = do_PUT = answer
            def log_message(self, *arguments):
                pass
        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        print(f"upstream listening on http://127.0.0.1:{server.server_address[1]}", flush=True)
        server.serve_forever()
        """

    /// Sends requests to CONNECT (`host:port`) signed for HOST, one per argument `METHOD:PATH:HOW` (HOW is
    /// `header` for an SigV4 `Authorization`, `query` for a presigned URL, `none` for no signature), with
    /// absolute targets when MODE is `forward`; prints `METHOD PATH STATUS BODY` for each.
    static let client = """
        import hashlib, hmac, http.client, sys, urllib.parse
        KEY = b"kakapo-test-secret"
        connect, host, mode = sys.argv[1], sys.argv[2], sys.argv[3]
        for spec in sys.argv[4:]:
            method, path, how = spec.split(":")
            signature = hmac.new(KEY, f"{method}\\n{path}\\n{host}".encode(), hashlib.sha256).hexdigest()
            headers = {"Host": host, "X-Amz-Date": "20261128T120000Z"}
            target = path
            if how == "header":
                headers["Authorization"] = (
                    "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20261128/us-east-1/s3/aws4_request, "
                    "SignedHeaders=host;x-amz-date, Signature=" + signature)
            elif how == "query":
                target += "?" + urllib.parse.urlencode([
                    ("X-Amz-Algorithm", "AWS4-HMAC-SHA256"),
                    ("X-Amz-Credential", "AKIDEXAMPLE/20261128/us-east-1/s3/aws4_request"),
                    ("X-Amz-Date", "20261128T120000Z"), ("X-Amz-Expires", "300"),
                    ("X-Amz-SignedHeaders", "host"), ("X-Amz-Signature", signature)])
            if mode == "forward":
                target = "http://" + host + target
            connection = http.client.HTTPConnection(connect, timeout=30)
            connection.request(method, target, body=b"hello" if method == "PUT" else None, headers=headers)
            response = connection.getresponse()
            print(f"{method} {path} {response.status} {response.read().decode().strip()}", flush=True)
            connection.close()
        """

    static let signed = ["PUT:/bucket/key:header", "GET:/bucket/key:header", "GET:/bucket/shared:query"]

    /// Runs the client: CONNECT is where it connects, HOST what it signs for.
    static func send(connect: String, host: String, mode: String = "reverse", _ specs: [String]) async throws
        -> [String]
    {
        let run = try await KakapoProcess.run(["-c", client, connect, host, mode] + specs, executable: python)
        #expect(run.status == 0, "\(run.error)")
        return run.output.split(separator: "\n").map(String.init)
    }

    static func startUpstream() async throws -> (process: KakapoProcess, port: Int) {
        let process = try KakapoProcess(["-c", upstream], executable: python)
        return (process, try await process.waitUntilListening())
    }

    /// The lines of Kakapo's log that warn about a signature over `Host`.
    static func warnings(_ log: String) -> [Substring] {
        log.split(separator: "\n").filter { $0.contains("signature over Host") }
    }

    @Test(
        "without --preserve-host a request signed for Kakapo's address is refused upstream, and Kakapo warns once naming --preserve-host and --proxy"
    )
    func rewrittenHostWarnsOnce() async throws {
        let (upstream, upstreamPort) = try await Self.startUpstream()
        defer { upstream.send(SIGKILL) }
        let cassette = try Fixtures.temporaryDirectory() + "/s3.json"
        let kakapo = try KakapoProcess([
            "record", "--upstream", "http://127.0.0.1:\(upstreamPort)", "--cassette", cassette, "--port", "0",
        ])
        let port = try await kakapo.waitUntilListening()
        let address = "127.0.0.1:\(port)"
        // Unsigned first: they do not use up the one warning.
        let lines = try await Self.send(
            connect: address, host: address, ["GET:/public:none", "GET:/public/2:none"] + Self.signed + Self.signed)
        #expect(lines.prefix(2) == ["GET /public 200 public /public", "GET /public/2 200 public /public/2"])
        #expect(
            lines.dropFirst(2).allSatisfy { $0.contains(" 403 ") && $0.contains("SignatureDoesNotMatch") }, "\(lines)")
        #expect(lines.count == 2 + 2 * Self.signed.count)
        kakapo.send(SIGINT)
        #expect(try await kakapo.waitForExit() == 0)
        let warnings = Self.warnings(kakapo.standardError)
        #expect(warnings.count == 1, "\(kakapo.standardError)")
        let expected =
            "PUT /bucket/key carries an AWS SigV4 signature over Host \"\(address)\", but Kakapo sends Host "
            + "\"127.0.0.1:\(upstreamPort)\" upstream, so the upstream will reject the signature; use --preserve-host "
            + "(the client signs for Kakapo's address) or --proxy (forward-proxy mode keeps the client's Host)"
        #expect(warnings.first?.hasSuffix(expected) == true, "\(warnings)")
        #expect(warnings.first?.contains("warning") == true, "\(warnings)")
    }

    @Test(
        "a presigned URL alone is recognised too, and the warning never shows its signature"
    )
    func presignedURLWarns() async throws {
        let (upstream, upstreamPort) = try await Self.startUpstream()
        defer { upstream.send(SIGKILL) }
        let kakapo = try KakapoProcess([
            "serve", "--mode", "passthrough", "--upstream", "http://127.0.0.1:\(upstreamPort)", "--port", "0",
        ])
        let port = try await kakapo.waitUntilListening()
        let address = "127.0.0.1:\(port)"
        let lines = try await Self.send(connect: address, host: address, ["GET:/bucket/shared:query"])
        #expect(lines.first?.hasPrefix("GET /bucket/shared 403 ") == true, "\(lines)")
        kakapo.send(SIGINT)
        #expect(try await kakapo.waitForExit() == 0)
        let warnings = Self.warnings(kakapo.standardError)
        #expect(warnings.count == 1, "\(kakapo.standardError)")
        #expect(
            warnings.first?.contains("GET /bucket/shared carries an AWS SigV4 signature over Host \"\(address)\"")
                == true, "\(warnings)")
        #expect(!kakapo.standardError.contains("X-Amz-Signature"), "\(kakapo.standardError)")
    }

    @Test(
        "with --preserve-host the upstream gets the client's Host, the signatures hold, nothing warns, and the cassette replays with the upstream gone"
    )
    func preservedHostRecordsAndReplays() async throws {
        let (upstream, upstreamPort) = try await Self.startUpstream()
        let cassette = try Fixtures.temporaryDirectory() + "/s3.json"
        let recorder = try KakapoProcess([
            "record", "--upstream", "http://127.0.0.1:\(upstreamPort)", "--cassette", cassette, "--port", "0",
            "--preserve-host",
        ])
        let recordPort = try await recorder.waitUntilListening()
        let recordAddress = "127.0.0.1:\(recordPort)"
        let specs = Self.signed + ["GET:/public:none"]
        let recorded = try await Self.send(connect: recordAddress, host: recordAddress, specs)
        #expect(
            recorded == [
                "PUT /bucket/key 200 PUT /bucket/key signed for \(recordAddress)",
                "GET /bucket/key 200 GET /bucket/key signed for \(recordAddress)",
                "GET /bucket/shared 200 GET /bucket/shared signed for \(recordAddress)",
                "GET /public 200 public /public",
            ])
        recorder.send(SIGINT)
        #expect(try await recorder.waitForExit() == 0)
        #expect(Self.warnings(recorder.standardError).isEmpty, "\(recorder.standardError)")
        upstream.send(SIGKILL)
        _ = try await upstream.waitForExit()

        // The cassette holds the request as sent upstream: the client's Host.
        let text = try String(contentsOfFile: cassette, encoding: .utf8)
        #expect(text.contains(recordAddress), "\(text)")
        #expect(!text.contains("127.0.0.1:\(upstreamPort)"), "\(text)")

        // Another port, so another Host and other signatures: the recordings still answer.
        let replayer = try KakapoProcess(["replay", "--cassette", cassette, "--port", "0", "--strict"])
        let replayAddress = "127.0.0.1:\(try await replayer.waitUntilListening())"
        let replayed = try await Self.send(connect: replayAddress, host: replayAddress, specs)
        #expect(replayed == recorded)
        replayer.send(SIGINT)
        #expect(try await replayer.waitForExit() == 0, "\(replayer.standardError)")
        #expect(Self.warnings(replayer.standardError).isEmpty)
    }

    @Test("in forward-proxy mode the client's Host reaches the upstream: the signatures hold and nothing warns")
    func forwardProxyKeepsHost() async throws {
        let (upstream, upstreamPort) = try await Self.startUpstream()
        defer { upstream.send(SIGKILL) }
        let cassette = try Fixtures.temporaryDirectory() + "/s3.json"
        let kakapo = try KakapoProcess(["record", "--proxy", "--cassette", cassette, "--port", "0"])
        let port = try await kakapo.waitUntilListening()
        let upstreamAddress = "127.0.0.1:\(upstreamPort)"
        let lines = try await Self.send(
            connect: "127.0.0.1:\(port)", host: upstreamAddress, mode: "forward", Self.signed)
        #expect(lines.count == Self.signed.count)
        #expect(lines.allSatisfy { $0.contains(" 200 ") && $0.hasSuffix("signed for \(upstreamAddress)") }, "\(lines)")
        kakapo.send(SIGINT)
        #expect(try await kakapo.waitForExit() == 0)
        #expect(Self.warnings(kakapo.standardError).isEmpty, "\(kakapo.standardError)")
    }
}
