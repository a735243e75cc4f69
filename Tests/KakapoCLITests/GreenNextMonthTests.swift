import Foundation
import Kakapo
import KakapoTestSupport
import Synchronization
import Testing

/// A cassette recorded today still passes next month (issue 43): replayed times move with the clock, values
/// a client makes afresh match by shape, volatile values are learned, and `verify` gives a verdict.
@Suite("Command line: green next month too")
struct GreenNextMonthTests {
    static let python = CLITests.packageRoot + "/.build/python-venv/bin/python"
    static let twoDays = 172_800

    /// Fetches `BASE/session` through `http.cookiejar` with Python's clock moved `OFFSET` seconds, and prints
    /// how many cookies the jar kept and how far `Date` and `Expires` are from that clock, in seconds.
    static let cookieClient = """
        import sys, time, urllib.request, http.cookiejar, email.utils
        base, offset = sys.argv[1], float(sys.argv[2])
        real = time.time
        time.time = lambda: real() + offset
        jar = http.cookiejar.CookieJar()
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
        with opener.open(base + "/session", timeout=30) as response:
            headers = response.headers
        now = time.time()
        print("cookies", sorted(cookie.name for cookie in jar if not cookie.is_expired(now)))
        for name in ("Date", "Expires"):
            print(name, round(email.utils.parsedate_to_datetime(headers[name]).timestamp() - now))
        """

    /// An upstream that answers `/session` as a login does: `Date` now, `Expires` and a cookie in an hour.
    static func sessionUpstream() async throws -> TestUpstream {
        try await TestUpstream.start { _ in
            let now = Int64(Date().timeIntervalSince1970)
            let headers: HTTP.Headers = [
                "Date": HTTPDate.format(now), "Expires": HTTPDate.format(now + 3_600),
                "Set-Cookie": "sid=s1; Path=/; Expires=\(HTTPDate.format(now + 3_600)); HttpOnly",
                "Content-Type": "application/json",
            ]
            let body = #"{"user": "ada", "expiresAt": "\#(ISOTime(seconds: now + 3_600).text)"}"#
            return .response(HTTP.Response(status: 200, headers: headers, body: Array(body.utf8)))
        }
    }

    /// `kakapo ARGUMENTS` with the clock `seconds` ahead (`KAKAPO_NOW`).
    static func kakapo(_ arguments: [String], clockAhead seconds: Int) throws -> KakapoProcess {
        let moved = ISOTime(seconds: Int64(Date().timeIntervalSince1970) + Int64(seconds)).text
        return try KakapoProcess(["KAKAPO_NOW=\(moved)", KakapoProcess.binary] + arguments, executable: "/usr/bin/env")
    }

    static func record(_ upstream: TestUpstream, to path: String, _ targets: [String], extra: [String] = [])
        async throws
    {
        let recorder = try KakapoProcess(
            ["record", "--upstream", upstream.baseURL, "--cassette", path, "--port", "0"] + extra)
        let client = try TestClient(port: try await recorder.waitUntilListening())
        for target in targets { _ = try await client.send(.get, target) }
        client.shutdown()
        recorder.send(SIGINT)
        #expect(try await recorder.waitForExit() == 0, "\(recorder.standardError)")
    }

    @Test(
        "two days later a replayed cookie is still valid in http.cookiejar and Date and Expires keep to the clock; --keep-time gives the recorded ones"
    )
    func movedClock() async throws {
        let upstream = try await Self.sessionUpstream()
        defer { Task { await upstream.stop() } }
        let directory = try Fixtures.temporaryDirectory()
        let cassette = directory + "/session.json"
        let script = directory + "/cookies.py"
        try Self.cookieClient.write(toFile: script, atomically: true, encoding: .utf8)
        let recordingStarted = Date()
        try await Self.record(upstream, to: cassette, ["/session"])

        let replay = try Self.kakapo(
            ["replay", "--cassette", cassette, "--port", "0", "--shift-time-json", "/expiresAt"],
            clockAhead: Self.twoDays)
        let port = try await replay.waitUntilListening()
        let moved = try await KakapoProcess.run(
            [script, "http://127.0.0.1:\(port)", String(Self.twoDays)], executable: Self.python)
        #expect(moved.status == 0, "\(moved.error)")
        let lines = moved.output.split(separator: "\n").map(String.init)
        #expect(lines.first == "cookies ['sid']", "\(moved.output)")
        let date = try #require(lines.first { $0.hasPrefix("Date ") }.flatMap { Int($0.dropFirst(5)) })
        let expires = try #require(lines.first { $0.hasPrefix("Expires ") }.flatMap { Int($0.dropFirst(8)) })
        #expect(abs(date) <= 5, "\(moved.output)")
        #expect(abs(expires - 3_600) <= 5, "\(moved.output)")
        // The body's time named by --shift-time-json moved as much.
        let client = try TestClient(port: port)
        let body = try JSONParser.parse(try await client.send(.get, "/session").body)
        let expiresAt = try #require(body["expiresAt"]?.stringValue.flatMap { ISOTime.parse($0) })
        #expect(abs(expiresAt.seconds - Int64(Date().timeIntervalSince1970) - Int64(Self.twoDays) - 3_600) <= 5)
        client.shutdown()
        replay.send(SIGINT)
        _ = try await replay.waitForExit()

        let kept = try Self.kakapo(
            ["replay", "--cassette", cassette, "--port", "0", "--keep-time"], clockAhead: Self.twoDays)
        let keptPort = try await kept.waitUntilListening()
        let recorded = try await KakapoProcess.run(
            [script, "http://127.0.0.1:\(keptPort)", String(Self.twoDays)], executable: Self.python)
        #expect(recorded.output.hasPrefix("cookies []\n"), "\(recorded.output)")
        let keptDate = recorded.output.split(separator: "\n").first { $0.hasPrefix("Date ") }.flatMap {
            Int($0.dropFirst(5))
        }
        // The recorded Date, two days and however long this test has run since recording before the client's
        // clock (a loaded machine takes a minute): bounded by that time measured, not by a guess.
        let sinceRecording = Int(Date().timeIntervalSince(recordingStarted).rounded(.up)) + 2
        #expect(
            keptDate.map { $0 <= -Self.twoDays + 2 && $0 >= -Self.twoDays - sinceRecording } == true,
            "\(recorded.output), \(sinceRecording) s since recording")
        kept.send(SIGINT)
        _ = try await kept.waitForExit()

        let show = try Self.kakapo(["cassette", "show", cassette], clockAhead: Self.twoDays)
        #expect(try await show.waitForExit() == 0)
        #expect(show.standardOutput.contains("(2 days old)"), "\(show.standardOutput)")
    }

    /// A search the client signs with a fresh UUID and time on every call.
    static func search(q: String, port: Int) async throws -> HTTP.Response {
        let client = try TestClient(port: port)
        defer { client.shutdown() }
        let body = #"{"nonce": "\#(UUID().uuidString.lowercased())", "ts": "\#(UTCTimestamp.now())", "q": "\#(q)"}"#
        return try await client.send(
            .post, "/search", headers: ["Content-Type": "application/json"], body: Array(body.utf8))
    }

    @Test(
        "a client sending {nonce: uuid4, ts: now, q} replays without any flag and is told it matched by shape; another q misses naming /q only; --strict-values misses"
    )
    func nonceReplay() async throws {
        let upstream = try await TestUpstream.start { request in
            .response(HTTP.Response(status: 200, contentType: "application/json", text: #"{"hits": 1}"#))
        }
        defer { Task { await upstream.stop() } }
        let cassette = try Fixtures.temporaryDirectory() + "/search.json"
        let recorder = try KakapoProcess([
            "record", "--upstream", upstream.baseURL, "--cassette", cassette, "--port", "0",
        ])
        _ = try await Self.search(q: "x", port: try await recorder.waitUntilListening())
        recorder.send(SIGINT)
        #expect(try await recorder.waitForExit() == 0)

        let replay = try KakapoProcess(["replay", "--cassette", cassette, "--port", "0"])
        let port = try await replay.waitUntilListening()
        let hit = try await Self.search(q: "x", port: port)
        #expect(hit.status == 200 && hit.text == #"{"hits": 1}"#, "\(hit.text)")
        #expect(hit.headers["X-Kakapo-Matched-By"] == "shape; body /nonce, body /ts")
        let miss = try await Self.search(q: "y", port: port)
        #expect(miss.status == 404)
        let report = try JSONParser.parse(miss.body)
        #expect(report["nearest"]?.arrayValue?.first?["differences"] == ["body field /q differs"], "\(miss.text)")
        replay.send(SIGINT)
        _ = try await replay.waitForExit()

        let strict = try KakapoProcess(["replay", "--cassette", cassette, "--port", "0", "--strict-values"])
        #expect(try await Self.search(q: "x", port: try await strict.waitUntilListening()).status == 404)
        strict.send(SIGINT)
        _ = try await strict.waitForExit()
    }

    /// An API answering `{"id": uuid, "at": now, "name": ...}`, whose later versions add a field or change
    /// the type of `name`.
    final class API: Sendable {
        let version = Mutex(1)

        func reply(_ request: HTTP.Request) -> TestUpstream.Reply {
            var object: JSONObject = [
                "id": .string(UUID().uuidString.lowercased()), "at": .string(UTCTimestamp.now()), "name": "Ada",
            ]
            switch version.withLock({ $0 }) {
            case 2: object["nickname"] = "ada"
            case 3: object["name"] = .number(JSONNumber(7))
            default: break
            }
            return .response(
                HTTP.Response(
                    status: 200, headers: ["Content-Type": "application/json", "X-Request-Id": UUID().uuidString],
                    body: JSONWriter().write(.object(object))))
        }
    }

    @Test(
        "record --learn-volatile marks /id and /at; verify says same when only they change, benign for an added field, changed for a new type, and --update keeps the markings"
    )
    func learnAndVerify() async throws {
        let api = API()
        let upstream = try await TestUpstream.start { api.reply($0) }
        defer { Task { await upstream.stop() } }
        let directory = try Fixtures.temporaryDirectory()
        let cassette = directory + "/users.json"
        try await Self.record(upstream, to: cassette, ["/users/1"], extra: ["--learn-volatile"])
        let learned = try CassetteFile.load(cassette).interactions[0].volatile
        #expect(learned.response.contains(.body(JSONPointer("/id")!)))
        #expect(learned.response.contains(.body(JSONPointer("/at")!)))
        #expect(!learned.response.contains(.body(JSONPointer("/name")!)))

        func verify(_ extra: [String] = []) async throws -> (status: Int32, output: String, error: String) {
            try await KakapoProcess.run(["verify", "--cassette", cassette, "--upstream", upstream.baseURL] + extra)
        }
        let same = try await verify()
        #expect(
            same.status == 0
                && same.output == "#0 GET /users/1: same\n1 same, 0 benign, 0 changed, 0 skipped, 0 failed\n",
            "\(same.output)\(same.error)")

        api.version.withLock { $0 = 2 }
        let benign = try await verify()
        #expect(
            benign.status == 0 && benign.output.hasPrefix("#0 GET /users/1: benign\n0 same, 1 benign"),
            "\(benign.output)")
        let json = try JSONParser.parse(try await verify(["--format", "json"]).output)
        #expect(json["interactions"]?.arrayValue?.first?["details"] == [#"body /nickname: added ("ada")"#])

        api.version.withLock { $0 = 3 }
        let changed = try await verify()
        #expect(changed.status == 1)
        #expect(
            changed.output.hasPrefix(
                "#0 GET /users/1: changed\n    body /name: a string recorded, a number now (\"Ada\" recorded, 7 now)\n"),
            "\(changed.output)")
        let updated = try await verify(["--update"])
        #expect(updated.error.contains("re-recorded 1 interaction"), "\(updated.error)")
        let after = try CassetteFile.load(cassette).interactions[0]
        #expect(after.volatile == learned)
        #expect(try await verify().status == 0)
    }

    @Test("verdicts: a username is a value, a status word or an UPPER_CASE value an enum, a removed member a change")
    func verdicts() throws {
        func verdict(_ recorded: String, _ live: String) throws -> ResponseComparison.Verdict {
            let one = HTTP.Response(status: 200, contentType: "application/json", text: recorded)
            let other = HTTP.Response(status: 200, contentType: "application/json", text: live)
            return ResponseComparison().classified(recorded: one, live: other).map(\.verdict).max() ?? .same
        }
        #expect(try verdict(#"{"user": "ada"}"#, #"{"user": "bob"}"#) == .benign)
        #expect(try verdict(#"{"status": "active"}"#, #"{"status": "suspended"}"#) == .changed)
        #expect(try verdict(#"{"plan": "FREE"}"#, #"{"plan": "PRO"}"#) == .changed)
        #expect(try verdict(#"{"a": 1, "b": 2}"#, #"{"a": 1}"#) == .changed)
        #expect(try verdict(#"{"a": 1}"#, #"{"a": 1, "b": 2}"#) == .benign)
        #expect(try verdict(#"{"a": 1}"#, #"{"a": null}"#) == .benign)
        #expect(try verdict(#"{"items": [1, 2]}"#, #"{"items": [1, 2, 3]}"#) == .benign)
        #expect(try verdict(#"{"at": "2026-11-01T10:00:00Z"}"#, #"{"at": "2026-11-29T10:00:00Z"}"#) == .benign)
    }

    @Test("cassette learn-volatile marks an existing cassette, request places of a volatile shape included")
    func learnCommand() async throws {
        let api = API()
        let upstream = try await TestUpstream.start { api.reply($0) }
        defer { Task { await upstream.stop() } }
        let cassette = try Fixtures.temporaryDirectory() + "/c.json"
        try await Self.record(upstream, to: cassette, ["/users/1?nonce=9f86d081884c7d659a2feaa0c55ad015"])
        #expect(try CassetteFile.load(cassette).interactions[0].volatile.isEmpty)
        let run = try await KakapoProcess.run(["cassette", "learn-volatile", cassette, "--against", upstream.baseURL])
        #expect(run.status == 0, "\(run.error)")
        #expect(
            run.output
                == "#0 GET /users/1?nonce=9f86d081884c7d659a2feaa0c55ad015: body /at, body /id, header x-request-id, query nonce\n",
            "\(run.output)")
        let volatile = try CassetteFile.load(cassette).interactions[0].volatile
        #expect(volatile.request == [.query("nonce")])
        // Matching ignores the marked query parameter, even with --strict-values.
        let replay = try KakapoProcess(["replay", "--cassette", cassette, "--port", "0", "--strict-values"])
        let client = try TestClient(port: try await replay.waitUntilListening())
        let hit = try await client.send(.get, "/users/1?nonce=other")
        #expect(
            hit.status == 200 && hit.headers["X-Kakapo-Matched-By"] == "shape; query nonce (marked volatile)",
            "\(hit.text)")
        client.shutdown()
        replay.send(SIGINT)
        _ = try await replay.waitForExit()
    }
}
