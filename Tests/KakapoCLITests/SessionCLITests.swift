import Foundation
import Kakapo
import KakapoTestSupport
import Testing

/// `kakapo serve --cassette-dir`: cassette sessions with the built binary, curl, and an HTTPS upstream
/// reached through `CONNECT` (the HTTPS tests run one at a time: they start several processes).
@Suite("Command line: cassette sessions", .serialized)
struct SessionCLITests {
    /// curl with `arguments`: exit status, body, and the `X-Kakapo-Source` of the answer.
    static func curl(_ arguments: [String]) async throws -> (status: Int32, body: String, source: String?) {
        let headers = try Fixtures.temporaryDirectory() + "/headers.txt"
        let result = try await KakapoProcess.run(
            ["-sS", "--max-time", "20", "-D", headers] + arguments, executable: "/usr/bin/curl")
        let headerText = (try? String(contentsOfFile: headers, encoding: .utf8)) ?? ""
        let source = headerText.split(separator: "\r\n").last { $0.lowercased().hasPrefix("x-kakapo-source:") }
            .map { $0.split(separator: ":", maxSplits: 1)[1].trimmingCharacters(in: .whitespaces) }
        return (result.status, result.output + result.error, source)
    }

    /// Opens a session on the Kakapo at `port` and returns the answer as a dictionary.
    static func open(_ port: Int, _ body: String) async throws -> [String: Any] {
        let answer = try await curl([
            "-X", "POST", "-H", "Content-Type: application/json", "--data", body,
            "http://127.0.0.1:\(port)/__kakapo/sessions",
        ])
        return (try? JSONSerialization.jsonObject(with: Data(answer.body.utf8))) as? [String: Any] ?? [:]
    }

    /// An HTTPS upstream: the binary serving a route with `--tls`, under a CA of its own.
    static func httpsUpstream(in directory: String) async throws -> (process: KakapoProcess, port: Int, ca: String) {
        let routes = directory + "/upstream.routes.yaml"
        try """
        routes:
          - method: GET
            path: /hello/:name
            response:
              json: {hello: "{{params.name}}"}
        """.write(toFile: routes, atomically: true, encoding: .utf8)
        let process = try KakapoProcess([
            "serve", "--routes", routes, "--tls", "--ca-dir", directory + "/upstream-ca", "--port", "0",
        ])
        return (process, try await process.waitUntilListening(), directory + "/upstream-ca/kakapo-ca.pem")
    }

    @Test(
        "a session owns a CONNECT tunnel to an HTTPS upstream; kill -9 loses nothing it recorded; the next open replays it"
    )
    func connectAndRecovery() async throws {
        let directory = try Fixtures.temporaryDirectory()
        let cassettes = directory + "/cassettes"
        try FileManager.default.createDirectory(atPath: cassettes, withIntermediateDirectories: true)
        let upstream = try await Self.httpsUpstream(in: directory)
        let arguments = [
            "serve", "--proxy", "--cassette-dir", cassettes, "--ca-dir", directory + "/ca", "--upstream-ca",
            upstream.ca, "--port", "0",
        ]
        let kakapoCA = directory + "/ca/kakapo-ca.pem"
        let recorder = try KakapoProcess(arguments)
        let port = try await recorder.waitUntilListening()
        let session = try await Self.open(port, #"{"cassette": "tls/hello.json", "mode": "new"}"#)
        let proxy = try #require(session["proxy"] as? String)
        let target = "https://localhost:\(upstream.port)/hello/kea"
        let recorded = try await Self.curl(["--proxy", proxy, "--cacert", kakapoCA, target])
        #expect(recorded.status == 0, "\(recorded.body)")
        #expect(recorded.body == #"{"hello":"kea"}"#)
        #expect(recorded.source == "upstream")
        // A tunnel for a session nobody opened is refused at CONNECT.
        let unknown = try await Self.curl([
            "--proxy", "http://0000000000000000:@127.0.0.1:\(port)", "--cacert", kakapoCA, target,
        ])
        #expect(unknown.status != 0)
        #expect(unknown.body.contains("404"))
        recorder.send(SIGKILL)
        _ = try await recorder.waitForExit()
        upstream.process.send(SIGTERM)
        _ = try await upstream.process.waitForExit()

        // The journal the killed run left is folded in when the next session opens the file.
        let replayer = try KakapoProcess(arguments)
        let replayPort = try await replayer.waitUntilListening()
        let replay = try await Self.open(replayPort, #"{"cassette": "tls/hello.json", "mode": "none"}"#)
        let replayProxy = try #require(replay["proxy"] as? String, "\(replay)")
        let replayed = try await Self.curl(["--proxy", replayProxy, "--cacert", kakapoCA, target])
        #expect(replayed.body == #"{"hello":"kea"}"#)
        #expect(replayed.source == "cassette")
        let saved = try String(contentsOfFile: cassettes + "/tls/hello.json", encoding: .utf8)
        #expect(saved.contains("https://localhost:\(upstream.port)/hello/kea"))
        #expect(!saved.lowercased().contains("proxy-authorization"))
        replayer.send(SIGINT)
        #expect(try await replayer.waitForExit() == 0)
        // Folded from the journal when the kill came before the background save, already in the file if not.
        #expect(!FileManager.default.fileExists(atPath: cassettes + "/tls/hello.json.journal"))
    }

    @Test("--session-timeout out of range and a missing --cassette-dir are refused, naming the flag")
    func flags() async throws {
        let zero = try await KakapoProcess.run(["serve", "--cassette-dir", "/tmp", "--session-timeout", "0"])
        #expect(zero.status == 2)
        #expect(zero.error.contains("--session-timeout"))
        let missing = try await KakapoProcess.run([
            "serve", "--cassette-dir", "/nonexistent/kakapo-sessions", "--port", "0",
        ])
        #expect(missing.status == 3)
        #expect(missing.error.contains("--cassette-dir /nonexistent/kakapo-sessions"))
    }

    @Test(
        "serve --mode none --upstream --cassette-dir is accepted: a session records into folders it makes, a none session on a missing file opens and says so, a passthrough session needs no folder"
    )
    func sessionsWithoutSurprises() async throws {
        let directory = try Fixtures.temporaryDirectory()
        let upstream = try await TestUpstream.start { request in
            .response(HTTP.Response(status: 200, contentType: "text/plain", text: "live " + request.path))
        }
        defer { Task { await upstream.stop() } }
        let kakapo = try KakapoProcess([
            "serve", "--mode", "none", "--upstream", upstream.baseURL, "--cassette-dir", directory, "--port", "0",
        ])
        let port = try await kakapo.waitUntilListening()
        func get(_ path: String, session: String?) async throws -> (status: Int32, body: String, source: String?) {
            try await Self.curl(
                (session.map { ["-H", "X-Kakapo-Session: \($0)"] } ?? []) + ["http://127.0.0.1:\(port)" + path])
        }
        // The server's own mode is none: a request of no session misses.
        #expect(try await get("/a", session: nil).source == "miss")

        let recording = try await Self.open(port, #"{"cassette": "team/api/users.json", "mode": "new"}"#)
        let recordingID = try #require(recording["id"] as? String, "\(recording)")
        let recorded = try await get("/a", session: recordingID)
        #expect(recorded.body == "live /a" && recorded.source == "upstream", "\(recorded)")
        _ = try await Self.curl(["-X", "DELETE", "http://127.0.0.1:\(port)/__kakapo/sessions/\(recordingID)"])
        #expect(try CassetteFile.load(directory + "/team/api/users.json").interactions.count == 1)

        let replaying = try await Self.open(port, #"{"cassette": "nowhere/missing.json", "mode": "none"}"#)
        let replayingID = try #require(replaying["id"] as? String, "\(replaying)")
        #expect(try await get("/a", session: replayingID).source == "miss")
        let summary = try await Self.curl([
            "-X", "DELETE", "http://127.0.0.1:\(port)/__kakapo/sessions/\(replayingID)",
        ])
        #expect(summary.body.contains("the cassette nowhere/missing.json does not exist"), "\(summary.body)")
        #expect(!FileManager.default.fileExists(atPath: directory + "/nowhere"), "a replaying session made a folder")

        let passing = try await Self.open(port, #"{"cassette": "elsewhere/none.json", "mode": "passthrough"}"#)
        let passingID = try #require(passing["id"] as? String, "\(passing)")
        #expect(try await get("/b", session: passingID).body == "live /b")
        kakapo.send(SIGINT)
        #expect(try await kakapo.waitForExit() == 0)
    }

    @Test(
        "a recording killed before it records anything leaves no lock file, and the next command removes its empty journal without a word"
    )
    func killedIdleRecording() async throws {
        let directory = try Fixtures.temporaryDirectory()
        let cassette = directory + "/idle.json"
        try #"{"version": 1, "interactions": []}"#.write(toFile: cassette, atomically: true, encoding: .utf8)
        let recorder = try KakapoProcess([
            "record", "--upstream", "http://127.0.0.1:9", "--cassette", cassette, "--port", "0",
        ])
        _ = try await recorder.waitUntilListening()
        recorder.send(SIGKILL)
        _ = try await recorder.waitForExit()
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: directory).sorted() == [
                "idle.json", "idle.json.journal",
            ])
        let show = try await KakapoProcess.run(["cassette", "show", cassette])
        #expect(show.status == 0 && !show.error.contains("folded") && !show.output.contains("folded"), "\(show)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory) == ["idle.json"])
    }

    @Test("cassette lint says when a journal left by a killed recording holds interactions not in the file yet")
    func lintSeesJournal() async throws {
        let directory = try Fixtures.temporaryDirectory()
        let cassette = directory + "/killed.json"
        try #"{"version": 1, "interactions": []}"#.write(toFile: cassette, atomically: true, encoding: .utf8)
        let clean = try await KakapoProcess.run(["cassette", "lint", cassette])
        #expect(clean.status == 0 && !clean.output.contains("journal"), "\(clean.output)")
        // Two entries as a recording writes them, and a third cut short by the kill (not counted).
        let entry =
            #"{"replace": false, "interaction": {"request": {"method": "GET", "url": "/a"}, "response": {"status": 200}}}"#
        let journal = "\u{1E}\(entry)\n\u{1E}\(entry)\n\u{1E}{\"replace\": fal"
        try journal.write(toFile: cassette + ".journal", atomically: true, encoding: .utf8)
        let lint = try await KakapoProcess.run(["cassette", "lint", cassette])
        #expect(lint.status == 0, "\(lint.error)")
        #expect(
            lint.output.contains("killed.json.journal holds 2 interactions not in the file yet, left by a recording"),
            "\(lint.output)")
    }

    @Test(
        "recording sessions are bounded by the descriptors the process may open: with ulimit -n 300, the ninth gets 503 naming the bound, replay sessions and forwarding go on, and ending one frees a place"
    )
    func recordingSessionsBoundedByDescriptors() async throws {
        let directory = try Fixtures.temporaryDirectory()
        let upstream = try await TestUpstream.start { request in
            .response(HTTP.Response(status: 200, contentType: "text/plain", text: request.path))
        }
        defer { Task { await upstream.stop() } }
        // 300 descriptors: (300 - 256) / 8 is under the floor of 8 recording sessions.
        let kakapo = try KakapoProcess(
            [
                "-c", #"ulimit -n 300 && exec "$0" "$@""#, KakapoProcess.binary, "serve", "--mode", "passthrough",
                "--upstream", upstream.baseURL, "--cassette-dir", directory, "--port", "0",
            ], executable: "/bin/sh")
        let port = try await kakapo.waitUntilListening()
        var ids: [String] = []
        for index in 0..<8 {
            let opened = try await Self.open(port, #"{"cassette": "s\#(index).json", "mode": "new"}"#)
            ids.append(try #require(opened["id"] as? String, "session \(index): \(opened)"))
        }
        let refused = try await Self.open(port, #"{"cassette": "s8.json", "mode": "new"}"#)
        #expect((refused["error"] as? String)?.contains("8 sessions record already") == true, "\(refused)")
        // The variant: replaying needs no descriptor held, and plain forwarding is not starved.
        try #"{"version": 1, "interactions": []}"#.write(
            toFile: directory + "/recorded.json", atomically: true, encoding: .utf8)
        let replay = try await Self.open(port, #"{"cassette": "recorded.json", "mode": "none"}"#)
        #expect(replay["id"] as? String != nil, "\(replay)")
        let forwarded = try await Self.curl(["http://127.0.0.1:\(port)/plain"])
        #expect(forwarded.body == "/plain" && ["upstream", "passthrough"].contains(forwarded.source), "\(forwarded)")
        _ = try await Self.curl(["-X", "DELETE", "http://127.0.0.1:\(port)/__kakapo/sessions/\(ids[0])"])
        let again = try await Self.open(port, #"{"cassette": "s8.json", "mode": "new"}"#)
        #expect(again["id"] as? String != nil, "\(again)")
        kakapo.send(SIGINT)
        #expect(try await kakapo.waitForExit() == 0, "\(kakapo.standardError)")
    }

    @Test(
        "out of descriptors, a forwarded request is answered 503 saying so, not 502 'cannot connect' (or, to a host by name, 'cannot resolve')",
        arguments: ["127.0.0.1", "localhost"])
    func outOfDescriptorsSaysSo(_ host: String) async throws {
        let upstream = try await TestUpstream.start { request in
            .response(HTTP.Response(status: 200, contentType: "text/plain", text: request.path))
        }
        defer { Task { await upstream.stop() } }
        // By name, the resolver needs a descriptor of its own (it reads /etc/hosts) and fails first.
        let upstreamURL = upstream.baseURL.replacingOccurrences(of: "127.0.0.1", with: host)
        let kakapo = try KakapoProcess(
            [
                "-c", #"ulimit -n 64 && exec "$0" "$@""#, KakapoProcess.binary, "serve", "--mode", "passthrough",
                "--upstream", upstreamURL, "--port", "0",
            ], executable: "/bin/sh")
        let port = try await kakapo.waitUntilListening()
        // A connection accepted while descriptors are left; then enough others that accepting runs out.
        let client = try RawConnection(port: port, timeout: 20)
        try await Task.sleep(for: .milliseconds(300))
        var flood: [RawConnection] = []
        for _ in 0..<80 { flood.append(try RawConnection(port: port, timeout: 20)) }
        let deadline = ContinuousClock.now + .seconds(20)
        while !kakapo.standardError.contains("cannot accept connections") && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(kakapo.standardError.contains("cannot accept connections"), "\(kakapo.standardError)")
        client.send("GET /plain HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        let answer = client.receive { $0.contains("\r\n\r\n") && $0.hasSuffix("}\n") }.text
        #expect(answer.hasPrefix("HTTP/1.1 503"), "\(answer.prefix(400))")
        #expect(answer.lowercased().contains("\r\nretry-after: 1\r\n"), "\(answer.prefix(400))")
        #expect(answer.contains("out of file descriptors") && answer.contains("ulimit -n"), "\(answer)")
        for connection in flood { connection.closeNow() }
        // Once they leave, forwarding works again.
        var forwarded: (status: Int32, body: String, source: String?) = (0, "", nil)
        while ContinuousClock.now < deadline + .seconds(20) {
            forwarded = try await Self.curl(["http://127.0.0.1:\(port)/again"])
            if forwarded.body == "/again" { break }
            try await Task.sleep(for: .milliseconds(200))
        }
        #expect(forwarded.body == "/again", "\(forwarded)")
        kakapo.send(SIGINT)
        #expect(try await kakapo.waitForExit() == 0, "\(kakapo.standardError)")
    }
}
