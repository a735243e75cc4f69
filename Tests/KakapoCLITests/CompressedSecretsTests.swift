import Foundation
import KakapoJSON
import KakapoTestSupport
import Testing

/// Issue 42 with real peers: a token endpoint that answers `br` (read by Python's requests, which asks for br
/// once the brotli package is installed) and `zstd` (curl `--compressed`), encoded by the reference libraries,
/// and an STS-like XML answer, recorded through the built `kakapo`. The cassette holds none of the secrets,
/// `cassette lint` reads every body, and replay gives each client the coding it asked for, or the body decoded.
@Suite(
    "Secrets in compressed and XML bodies, through kakapo", .serialized, .enabled(if: PythonWebSocketPeer.isAvailable))
struct CompressedSecretsTests {
    static let python = PythonWebSocketPeer.python

    static let token = "at-9f8e7d6c5b4a3f2e1d0c-secret"
    static let secretKey = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"

    /// The upstream: `/token.br` and `/token.zst` (a token answer in that coding, whatever was asked), `/sts`
    /// (XML credentials), `/blob` (an answer in a coding nobody decodes).
    static let upstream = #"""
        import http.server, json, sys
        import brotli, zstandard
        TOKEN = {"access_token": "%s", "token_type": "Bearer", "expires_in": 3600}
        STS = """<AssumeRoleResponse><AssumeRoleResult><Credentials>
        <AccessKeyId>ASIAIOSFODNN7EXAMPLE</AccessKeyId><SecretAccessKey>%s</SecretAccessKey>
        <SessionToken>FwoGZXIvYXdzEXAMPLEsessiontokenvalue0123</SessionToken>
        <Expiration>2026-11-29T12:00:00Z</Expiration></Credentials></AssumeRoleResult></AssumeRoleResponse>"""
        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            def log_message(self, *args): pass
            def do_GET(self):
                coding = None
                if self.path == "/token.br":
                    body, coding, kind = brotli.compress(json.dumps(TOKEN).encode()), "br", "application/json"
                elif self.path == "/token.zst":
                    body, coding, kind = zstandard.ZstdCompressor().compress(json.dumps(TOKEN).encode()), "zstd", "application/json"
                elif self.path == "/sts":
                    body, kind = STS.encode(), "text/xml"
                else:
                    body, coding, kind = b"\x1f\x9d\x90opaque", "compress", "application/octet-stream"
                self.send_response(200)
                self.send_header("Content-Type", kind)
                if coding: self.send_header("Content-Encoding", coding)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
        TOKEN["access_token"] = sys.argv[1]
        STS = STS % sys.argv[2]
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        print("upstream listening on http://127.0.0.1:%d" % server.server_address[1], flush=True)
        server.serve_forever()
        """#

    /// requests' GET of `url`: status, Content-Encoding, and the body it decoded.
    static let client = #"""
        import json, sys, requests
        r = requests.get(sys.argv[1], timeout=20)
        print(json.dumps({"status": r.status_code, "coding": r.headers.get("Content-Encoding"), "text": r.text}))
        """#

    static func requests(_ script: String, _ url: String) async throws -> JSONObject {
        let result = try await KakapoProcess.run([script, url], executable: python)
        try #require(result.status == 0, "requests: \(result.error)")
        return try JSONParser.parse(Array(result.output.utf8)).objectValue ?? [:]
    }

    @Test(
        "br and zstd token answers and an XML one are recorded without their secrets, lint reads them all, replay encodes again"
    )
    func compressedAndXML() async throws {
        let directory = try Fixtures.temporaryDirectory()
        let cassette = directory + "/tokens.json"
        let upstreamScript = directory + "/upstream.py"
        let clientScript = directory + "/client.py"
        try Self.upstream.write(toFile: upstreamScript, atomically: true, encoding: .utf8)
        try Self.client.write(toFile: clientScript, atomically: true, encoding: .utf8)
        let upstream = try KakapoProcess([upstreamScript, Self.token, Self.secretKey], executable: Self.python)
        defer { upstream.send(SIGKILL) }
        let upstreamPort = try await upstream.waitUntilListening()

        let recorder = try KakapoProcess([
            "record", "--cassette", cassette, "--upstream", "http://127.0.0.1:\(upstreamPort)", "--port", "0",
        ])
        let port = try await recorder.waitUntilListening()
        let base = "http://127.0.0.1:\(port)"
        // While recording the client gets what the upstream sent: the live token.
        let live = try await Self.requests(clientScript, base + "/token.br")
        #expect(live["coding"] == "br" && live["text"]?.stringValue?.contains(Self.token) == true, "\(live)")
        let zstd = try await RangeReplayTests.curl(["--compressed", base + "/token.zst"])
        #expect(zstd.contains(Self.token), "\(zstd)")
        let sts = try await RangeReplayTests.curl([base + "/sts"])
        #expect(sts.contains(Self.secretKey))
        _ = try await RangeReplayTests.curl([base + "/blob"])
        recorder.send(SIGINT)
        #expect(try await recorder.waitForExit() == 0, "\(recorder.standardError)")

        // Nothing of the secrets on disk, in clear or in the encoded bytes (the bodies are stored decoded).
        let file = try String(contentsOfFile: cassette, encoding: .utf8)
        for secret in [Self.token, Self.secretKey, "FwoGZXIvYXdzEXAMPLEsessiontokenvalue0123"] {
            #expect(!file.contains(secret), "\(secret) is in the cassette")
        }
        #expect(file.contains(#""encoding" : "br""#) || file.contains(#""encoding": "br""#), "\(file.prefix(2000))")

        // lint reads every body it can; the one in a coding nobody decodes is listed, and the status says so.
        let lint = try await KakapoProcess.run(["cassette", "lint", cassette])
        #expect(lint.status == 7, "\(lint.output)\(lint.error)")
        #expect(lint.output.contains("no credentials found in what was read; 1 body not inspected"), "\(lint.output)")
        #expect(
            lint.error.contains("the response body was not inspected: its Content-Encoding compress"), "\(lint.error)")
        #expect(
            lint.error.split(separator: "\n").filter { $0.contains("not inspected") }.count == 1,
            "the br, zstd and XML bodies were read: \(lint.error)")

        let replayer = try KakapoProcess(["replay", "--cassette", cassette, "--port", "0"])
        let replayPort = try await replayer.waitUntilListening()
        let replay = "http://127.0.0.1:\(replayPort)"
        // requests asks for br and gets it, encoded again, with the redacted token.
        let again = try await Self.requests(clientScript, replay + "/token.br")
        #expect(again["status"] == 200 && again["coding"] == "br", "\(again)")
        #expect(again["text"]?.stringValue?.contains(#""access_token": "[REDACTED]""#) == true, "\(again)")
        // curl without --compressed gets the body decoded, with its own length.
        let plain = try await RangeReplayTests.curl(["-i", replay + "/token.zst"])
        #expect(plain.contains(#""access_token": "[REDACTED]""#), "\(plain)")
        #expect(!plain.lowercased().contains("content-encoding"), "\(plain)")
        let compressed = try await RangeReplayTests.curl(["--compressed", "-i", replay + "/token.zst"])
        #expect(compressed.lowercased().contains("content-encoding: zstd"), "\(compressed)")
        #expect(compressed.contains(#""token_type": "Bearer""#), "\(compressed)")
        let xml = try await RangeReplayTests.curl([replay + "/sts"])
        #expect(xml.contains("<SecretAccessKey>[REDACTED]</SecretAccessKey>") && xml.contains("<Expiration>"), "\(xml)")
        replayer.send(SIGINT)
        _ = try await replayer.waitForExit()
    }
}
