import Foundation
import KakapoHTTP
import KakapoTestSupport
import Testing

/// The representation a request asks for is part of its identity (issue 41): parallel ranged downloads of
/// one object, conditional requests and `Vary: Accept`, recorded from an S3-like upstream with the built
/// `kakapo` and replayed with the upstream gone.
@Suite("Command line: ranges, validators and Vary on replay")
struct RangeReplayTests {
    static let python = CLITests.packageRoot + "/.build/python-venv/bin/python"
    static let objectSize = 64 * 1024
    static let part = 16 * 1024

    /// The object's bytes; the Python client builds the same ones.
    static let object: [UInt8] = (0..<objectSize).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ ($0 >> 8)) }

    /// An S3-like upstream: `/bucket/object` honours `Range: bytes=A-B` (206 with `Content-Range`) and
    /// `If-None-Match` (304 for its ETag); `/report` answers JSON or CSV by `Accept`, with `Vary: Accept`;
    /// `/page` answers `br` (bytes no client without a brotli decoder can read) to a request that accepts it.
    static func upstream() async throws -> TestUpstream {
        try await TestUpstream.start { request in
            switch request.path {
            case "/bucket/object":
                if request.headers["If-None-Match"] == "\"v1\"" {
                    return .response(HTTP.Response(status: 304, headers: ["ETag": "\"v1\""]))
                }
                let bounds = (request.headers["Range"] ?? "").dropFirst(6).split(separator: "-").compactMap { Int($0) }
                if request.headers["Range"]?.hasPrefix("bytes=") == true, bounds.count == 2, bounds[0] >= 0,
                    bounds[0] <= bounds[1], bounds[1] < objectSize
                {
                    return .response(
                        HTTP.Response(
                            status: 206,
                            headers: [
                                "Content-Type": "application/octet-stream", "ETag": "\"v1\"",
                                "Content-Range": "bytes \(bounds[0])-\(bounds[1])/\(objectSize)",
                            ], body: Array(object[bounds[0]...bounds[1]])))
                }
                return .response(
                    HTTP.Response(
                        status: 200, headers: ["Content-Type": "application/octet-stream", "ETag": "\"v1\""],
                        body: object))
            case "/report":
                let csv = request.headers["Accept"] == "text/csv"
                return .response(
                    HTTP.Response(
                        status: 200,
                        headers: ["Content-Type": csv ? "text/csv" : "application/json", "Vary": "Accept"],
                        body: Array((csv ? "id,name\n1,kea\n" : #"{"id":1,"name":"kea"}"#).utf8)))
            case "/page":
                guard request.headers["Accept-Encoding"]?.contains("br") == true else {
                    return .response(HTTP.Response(status: 200, contentType: "text/plain", text: "plain page"))
                }
                return .response(
                    HTTP.Response(
                        status: 200, headers: ["Content-Type": "text/plain", "Content-Encoding": "br"],
                        body: [0x1b, 0x09, 0x00, 0xf8, 0x25, 0x82, 0x82, 0x02]))
            default:
                return .response(HTTP.Response(status: 404))
            }
        }
    }

    /// Fetches `ranges` (`A-B`) of `URL/bucket/object` on a pool of four threads, as boto3's
    /// `download_file` does, and prints one line per range: `A-B STATUS ok` when the bytes are exactly
    /// that part of the object, else what came.
    static let client = """
        import sys, urllib.request, urllib.error
        from concurrent.futures import ThreadPoolExecutor
        base, ranges = sys.argv[1], sys.argv[2:]
        size = \(objectSize)
        whole = bytes(((i * 31) + (i >> 8)) & 0xff for i in range(size))
        def fetch(spec):
            request = urllib.request.Request(base + "/bucket/object")
            if spec != "whole":
                request.add_header("Range", "bytes=" + spec)
            try:
                with urllib.request.urlopen(request, timeout=30) as response:
                    status, body = response.status, response.read()
            except urllib.error.HTTPError as error:
                status, body = error.code, error.read()
            if spec == "whole":
                expected = whole
            else:
                start, end = (int(x) for x in spec.split("-"))
                expected = whole[start:end + 1]
            return f"{spec} {status} " + ("ok" if body == expected else f"WRONG {len(body)} bytes {body[:80]!r}")
        with ThreadPoolExecutor(max_workers=4) as pool:
            for line in pool.map(fetch, ranges):
                print(line, flush=True)
        """

    static func runClient(_ script: String, base: String, _ ranges: [String]) async throws -> [String] {
        let run = try await KakapoProcess.run([script, base] + ranges, executable: python)
        #expect(run.status == 0, "\(run.error)")
        return run.output.split(separator: "\n").map(String.init)
    }

    static func curl(_ arguments: [String]) async throws -> String {
        try await KakapoProcess.run(["-sS", "--max-time", "20"] + arguments, executable: "/usr/bin/curl").output
    }

    @Test(
        "parallel ranged GETs replay each range's own bytes in any order; an unrecorded range misses naming the range; a 304 and a Vary answer only what chose them"
    )
    func rangedDownloadReplay() async throws {
        let directory = try Fixtures.temporaryDirectory()
        let cassette = directory + "/s3.json"
        let script = directory + "/download.py"
        try Self.client.write(toFile: script, atomically: true, encoding: .utf8)
        let ranges = stride(from: 0, to: Self.objectSize, by: Self.part).map { "\($0)-\($0 + Self.part - 1)" }

        let upstream = try await Self.upstream()
        let recorder = try KakapoProcess([
            "record", "--upstream", upstream.baseURL, "--cassette", cassette, "--port", "0",
        ])
        let recordingBase = "http://127.0.0.1:\(try await recorder.waitUntilListening())"
        let recorded = try await Self.runClient(script, base: recordingBase, ranges + ["whole"])
        #expect(recorded == (ranges + ["whole"]).map { "\($0) \($0 == "whole" ? 200 : 206) ok" })
        let recording = try TestClient(port: Int(recordingBase.split(separator: ":").last!)!)
        let notModified = try await recording.send(.get, "/bucket/object", headers: ["If-None-Match": "\"v1\""])
        #expect(notModified.status == 304)
        _ = try await recording.send(.get, "/report", headers: ["Accept": "application/json"])
        _ = try await recording.send(.get, "/report", headers: ["Accept": "text/csv"])
        let encoded = try await recording.send(.get, "/page", headers: ["Accept-Encoding": "gzip, br"])
        #expect(encoded.headers["Content-Encoding"] == "br")
        recording.shutdown()
        recorder.send(SIGINT)
        #expect(try await recorder.waitForExit() == 0)
        await upstream.stop()

        let replayer = try KakapoProcess(["replay", "--cassette", cassette, "--port", "0", "--strict"])
        let port = try await replayer.waitUntilListening()
        let base = "http://127.0.0.1:\(port)"
        // Another order, on four threads, each range twice: every one gets exactly its own bytes.
        let order = ranges.reversed() + ["whole"] + ranges
        let replayed = try await Self.runClient(script, base: base, order)
        #expect(replayed == order.map { "\($0) \($0 == "whole" ? 200 : 206) ok" })

        // curl -r of a range never recorded misses, and the miss names the range.
        let miss = try await Self.curl(["-r", "0-4095", "-w", "\n%{http_code}", base + "/bucket/object"])
        #expect(miss.hasSuffix("\n404"), "\(miss)")
        #expect(miss.contains("header range: bytes=0-4095 here, bytes="), "\(miss)")

        let client = try TestClient(port: port)
        defer { client.shutdown() }
        // The 304 was recorded for "v1": another validator and no validator get the whole object.
        let otherValidator = try await client.send(.get, "/bucket/object", headers: ["If-None-Match": "\"v0\""])
        #expect(otherValidator.status == 200)
        #expect(otherValidator.body == Self.object)
        let sameValidator = try await client.send(.get, "/bucket/object", headers: ["If-None-Match": "\"v1\""])
        #expect(sameValidator.status == 304)
        let plain = try await client.send(.get, "/bucket/object")
        #expect(plain.status == 200)
        #expect(plain.body == Self.object)

        // Vary: Accept: each Accept gets the answer recorded for it, whichever is asked first.
        let csv = try await client.send(.get, "/report", headers: ["Accept": "text/csv"])
        #expect(csv.text == "id,name\n1,kea\n")
        let json = try await client.send(.get, "/report", headers: ["Accept": "application/json"])
        #expect(json.text == #"{"id":1,"name":"kea"}"#)

        // A br answer is never given to a client that cannot read it: curl without --compressed misses.
        let unreadable = try await Self.curl(["-w", "\n%{http_code}", base + "/page"])
        #expect(unreadable.hasSuffix("\n404"), "\(unreadable)")
        #expect(unreadable.contains("header accept-encoding: absent here, gzip, br recorded"), "\(unreadable)")

        replayer.send(SIGINT)
        #expect(try await replayer.waitForExit() == 1, "--strict exits 1 after a miss")
    }

    @Test("--no-match-range gives ranges in recorded order, as before")
    func rangesNotMatched() async throws {
        let directory = try Fixtures.temporaryDirectory()
        let cassette = directory + "/ranges.json"
        let interactions = ["bytes=8-15", "bytes=0-7"].map { range in
            """
            {"request": {"method": "GET", "url": "/object", "headers": [["Range", "\(range)"]]},
             "response": {"status": 206, "headers": [["Content-Type", "text/plain"]], "body": {"text": "\(range)"}},
             "recordedAt": "2026-11-22T06:41:44.312Z", "durationMs": 1}
            """
        }
        let text = #"{"version": 1, "interactions": ["# + interactions.joined(separator: ",\n") + "]}"
        try text.write(toFile: cassette, atomically: true, encoding: .utf8)
        for (flags, expected) in [([String](), "bytes=0-7"), (["--no-match-range"], "bytes=8-15")] {
            let replayer = try KakapoProcess(["replay", "--cassette", cassette, "--port", "0"] + flags)
            let client = try TestClient(port: try await replayer.waitUntilListening())
            let answer = try await client.send(.get, "/object", headers: ["Range": "bytes=0-7"])
            #expect(answer.text == expected, "\(flags)")
            client.shutdown()
            replayer.send(SIGINT)
            _ = try await replayer.waitForExit()
        }
    }
}
