import Foundation
import Kakapo
import KakapoTestSupport
import Testing

/// The `kakapo` binary, run as a user runs it.
@Suite("Command line")
struct CLITests {
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path
    static let demoCassette = packageRoot + "/cassettes/demo.json"

    static func upstream() async throws -> TestUpstream {
        try await TestUpstream.start { request in
            .response(
                HTTP.Response(status: 200, contentType: "application/json", text: #"{"path":"\#(request.path)"}"#))
        }
    }

    @Test("replay prints one listening line with the port it got, answers, and exits 0 on SIGTERM with a summary")
    func replayDemo() async throws {
        let process = try KakapoProcess(["replay", "--cassette", Self.demoCassette, "--port", "0"])
        let port = try await process.waitUntilListening()
        #expect(port > 0)
        #expect(process.standardOutput == "kakapo listening on http://127.0.0.1:\(port)\n")
        let client = try TestClient(port: port)
        let user = try await client.send(.get, "/users/1")
        #expect(user.status == 200)
        #expect(user.text.contains("Ada Lovelace"))
        #expect(user.headers["X-Kakapo-Source"] == "cassette")
        let miss = try await client.send(.get, "/users/99")
        #expect(miss.status == 404 && miss.headers["X-Kakapo-Source"] == "miss")
        client.shutdown()
        process.send(SIGTERM)
        #expect(try await process.waitForExit() == 0)
        #expect(process.standardError.contains("replayed 1, missed 1"))
        #expect(process.standardError.contains("miss: GET /users/99"))
        #expect(process.standardOutput.split(separator: "\n").count == 1, "logs go to standard error")
    }

    @Test(
        "usage errors exit 2 and say which flag and why",
        arguments: [
            (["replay"], "--cassette"),
            (["replay", "--cassette", "x.json", "--port", "abc"], "--port"),
            (["replay", "--cassette", "x.json", "--port", "70000"], "--port must be from 0 to 65535"),
            (["record", "--cassette", "x.json"], "--upstream"),
            (["record", "--cassette", "x.json", "--upstream", "ftp://x"], "--upstream must be an http"),
            (["record", "--cassette", "x.json", "--upstream", "http://127.0.0.1:1", "--mode", "sometimes"], "--mode"),
            (["serve", "--cassette", "x.json", "--mode", "new"], "needs --upstream"),
            (["rewind"], "rewind"),
        ])
    func usageErrors(arguments: [String], mention: String) async throws {
        let result = try await KakapoProcess.run(arguments)
        #expect(result.status == 2, "\(arguments): \(result.error)")
        #expect(result.error.contains(mention), "\(arguments): \(result.error)")
        #expect(result.output.isEmpty)
    }

    @Test("help exits 0")
    func help() async throws {
        let result = try await KakapoProcess.run(["--help"])
        #expect(result.status == 0)
        #expect(result.output.contains("record") && result.output.contains("replay") && result.output.contains("serve"))
    }

    @Test("a malformed or missing cassette exits 3 and names the file and the line")
    func badCassette() async throws {
        let directory = try Fixtures.temporaryDirectory()
        let bad = directory + "/bad.json"
        try "{\n  \"version\": 1,\n  \"interactions\": [\n    {\"request\" {}}\n  ]\n}\n".write(
            toFile: bad, atomically: true, encoding: .utf8)
        let malformed = try await KakapoProcess.run(["replay", "--cassette", bad, "--port", "0"])
        #expect(malformed.status == 3)
        #expect(malformed.error.contains("bad.json:4:16: "), "\(malformed.error)")
        #expect(malformed.output.isEmpty, "nothing listens")

        let missing = try await KakapoProcess.run(["replay", "--cassette", directory + "/none.json", "--port", "0"])
        #expect(missing.status == 3)
        #expect(missing.error.contains("none.json: no such file"))
    }

    @Test("SIGINT and SIGTERM while recording save every answered interaction", arguments: [SIGINT, SIGTERM])
    func signalSaves(signal: Int32) async throws {
        let upstream = try await Self.upstream()
        let cassette = try Fixtures.temporaryDirectory() + "/rec.json"
        let process = try KakapoProcess([
            "record", "--upstream", upstream.baseURL, "--cassette", cassette, "--port", "0",
        ])
        let client = try TestClient(port: try await process.waitUntilListening())
        for index in 0..<5 {
            #expect(try await client.send(.get, "/items/\(index)").status == 200)
        }
        client.shutdown()
        process.send(signal)
        #expect(try await process.waitForExit() == 0)
        await upstream.stop()
        let saved = try CassetteFile.load(cassette)
        #expect(saved.interactions.map(\.request.target) == (0..<5).map { "/items/\($0)" })
        #expect(process.standardError.contains("recorded 5 interactions to \(cassette)"))
    }

    @Test("a burst of 100 parallel requests while recording loses nothing, and reaches the disk within a second")
    func parallelBurst() async throws {
        let upstream = try await Self.upstream()
        let cassette = try Fixtures.temporaryDirectory() + "/burst.json"
        let process = try KakapoProcess([
            "record", "--upstream", upstream.baseURL, "--cassette", cassette, "--port", "0",
        ])
        let client = try TestClient(port: try await process.waitUntilListening())
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for index in 0..<100 {
                group.addTask { try await client.send(.get, "/burst/\(index)").status }
            }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(statuses == Array(repeating: 200, count: 100))
        let answered = ContinuousClock.now

        // Still running: the file on disk catches up within a second of the last answer.
        var onDisk = 0
        while ContinuousClock.now - answered < .seconds(1) {
            onDisk = (try? CassetteFile.load(cassette).interactions.count) ?? 0
            if onDisk == 100 { break }
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(onDisk == 100)

        client.shutdown()
        process.send(SIGINT)
        #expect(try await process.waitForExit() == 0)
        await upstream.stop()
        let targets = Set(try CassetteFile.load(cassette).interactions.map(\.request.target))
        #expect(targets == Set((0..<100).map { "/burst/\($0)" }))
    }

    @Test("SIGINT during a burst: requests in flight finish and every answered one is saved")
    func signalDuringBurst() async throws {
        let upstream = try await TestUpstream.start { request in
            .delayed(
                seconds: 0.5,
                reply: .response(HTTP.Response(status: 200, contentType: "text/plain", text: request.path))
            )
        }
        let cassette = try Fixtures.temporaryDirectory() + "/burst.json"
        let process = try KakapoProcess([
            "record", "--upstream", upstream.baseURL, "--cassette", cassette, "--port", "0", "--upstream-concurrency",
            "64",
        ])
        let client = try TestClient(port: try await process.waitUntilListening())
        async let statuses = withThrowingTaskGroup(of: Int.self) { group in
            for index in 0..<40 {
                group.addTask { try await client.send(.get, "/inflight/\(index)").status }
            }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        // Every request is in flight (the upstream holds each for 0.5 s) when the signal arrives.
        let deadline = ContinuousClock.now + .seconds(20)
        while upstream.received.count < 40 && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(upstream.received.count == 40)
        process.send(SIGINT)
        #expect(try await statuses == Array(repeating: 200, count: 40))
        #expect(try await process.waitForExit() == 0)
        client.shutdown()
        await upstream.stop()
        #expect(
            Set(try CassetteFile.load(cassette).interactions.map(\.request.target))
                == Set((0..<40).map { "/inflight/\($0)" }))
    }

    @Test(
        "SIGKILL while recording leaves a complete cassette, and the next command folds in every answered interaction"
    )
    func killNine() async throws {
        let upstream = try await Self.upstream()
        let cassette = try Fixtures.temporaryDirectory() + "/killed.json"
        let process = try KakapoProcess([
            "record", "--upstream", upstream.baseURL, "--cassette", cassette, "--port", "0",
        ])
        let client = try TestClient(port: try await process.waitUntilListening())
        for index in 0..<20 { _ = try await client.send(.get, "/early/\(index)") }
        // Until a fold has written them: usually within a second, but the saver waits ten times its last
        // save, and under a loaded CI machine one save's fsync took long enough to push the next past 1.2 s.
        let early = (0..<20).map { "/early/\($0)" }
        let deadline = ContinuousClock.now + .seconds(15)
        while (try? CassetteFile.load(cassette))?.interactions.map(\.request.target) != early,
            ContinuousClock.now < deadline
        {
            try await Task.sleep(for: .milliseconds(50))
        }
        // Keep recording while the process is killed; remember what was answered.
        let traffic = Task {
            var answered: [String] = []
            var index = 0
            while !Task.isCancelled {
                if let response = try? await client.send(.get, "/late/\(index)"), response.status == 200 {
                    answered.append("/late/\(index)")
                }
                index += 1
            }
            return answered
        }
        try await Task.sleep(for: .milliseconds(300))
        process.send(SIGKILL)
        _ = try await process.waitForExit()
        traffic.cancel()
        let answered = await traffic.value
        client.shutdown()
        await upstream.stop()
        #expect(!answered.isEmpty)
        // The file alone is a complete cassette (the last fold); the journal holds the rest.
        let saved = try CassetteFile.load(cassette)
        #expect(Array(saved.interactions.map(\.request.target).prefix(20)) == (0..<20).map { "/early/\($0)" })
        #expect(FileManager.default.fileExists(atPath: cassette + ".journal"))

        // Any cassette command folds the journal in first.
        let list = try await KakapoProcess.run(["cassette", "show", cassette])
        #expect(list.status == 0, "\(list.error)")
        #expect(list.error.contains("folded"), "\(list.error)")
        let targets = try CassetteFile.load(cassette).interactions.map(\.request.target)
        #expect(Array(targets.prefix(20)) == (0..<20).map { "/early/\($0)" })
        let recorded = Set(targets)
        let lost = answered.filter { !recorded.contains($0) }
        #expect(lost.isEmpty, "answered but not recorded: \(lost)")
        #expect(targets.count == recorded.count, "an interaction was folded in twice")
        #expect(!FileManager.default.fileExists(atPath: cassette + ".journal"))
        for target in answered { #expect(list.output.contains(target)) }
    }

    @Test(
        "a recording killed before its first save is recovered by the next start and leaves no lock file; two recorders cannot share a file"
    )
    func recoveryAtStart() async throws {
        let upstream = try await Self.upstream()
        let cassette = try Fixtures.temporaryDirectory() + "/first.json"
        let first = try KakapoProcess([
            "record", "--upstream", upstream.baseURL, "--cassette", cassette, "--port", "0",
        ])
        let client = try TestClient(port: try await first.waitUntilListening())
        let second = try await KakapoProcess.run([
            "record", "--upstream", upstream.baseURL, "--cassette", cassette, "--port", "0",
        ])
        #expect(second.status != 0)
        #expect(second.error.contains("another kakapo is recording into this cassette"), "\(second.error)")
        #expect(try await client.send(.get, "/only").status == 200)
        first.send(SIGKILL)
        _ = try await first.waitForExit()
        client.shutdown()
        // The kill leaves the journal (what was not saved yet) and no lock file: the lock is taken on the journal.
        // (Whether a save came first, and left the file or a temporary copy, depends on the machine's pace.)
        let left = try FileManager.default.contentsOfDirectory(
            atPath: URL(fileURLWithPath: cassette).deletingLastPathComponent().path)
        #expect(left.contains("first.json.journal") && !left.contains { $0.hasSuffix(".lock") }, "\(left)")
        // A cut-off entry at the end (the kill came mid-write) is ignored.
        let journal = try FileHandle(forWritingTo: URL(fileURLWithPath: cassette + ".journal"))
        try journal.seekToEnd()
        try journal.write(contentsOf: Data([0x1E]) + Data("{\"replace\": false, \"interac".utf8))
        try journal.close()

        let replay = try KakapoProcess(["replay", "--cassette", cassette, "--port", "0"])
        let replayClient = try TestClient(port: try await replay.waitUntilListening())
        let answer = try await replayClient.send(.get, "/only")
        #expect(answer.status == 200)
        #expect(answer.headers["X-Kakapo-Source"] == "cassette")
        replayClient.shutdown()
        replay.send(SIGINT)
        #expect(try await replay.waitForExit() == 0)
        // Folded now, or (when the recorder's own fold came first) recognised as already saved.
        #expect(replay.standardError.contains("a recording left in"), "\(replay.standardError)")
        #expect(!FileManager.default.fileExists(atPath: cassette + ".journal"))
        await upstream.stop()
    }

    @Test("--strict exits 1 when a request missed, 0 when none did")
    func strictMode() async throws {
        for (path, expected) in [("/users/1", Int32(0)), ("/nope", Int32(1))] {
            let process = try KakapoProcess(["replay", "--cassette", Self.demoCassette, "--port", "0", "--strict"])
            let client = try TestClient(port: try await process.waitUntilListening())
            _ = try await client.send(.get, path)
            client.shutdown()
            process.send(SIGINT)
            #expect(try await process.waitForExit() == expected, "\(path): \(process.standardError)")
            if expected == 1 { #expect(process.standardError.contains("miss: GET /nope")) }
            // Strict mode lists every recorded interaction that was never used.
            for unused in ["#0 GET /users", "#2 GET /users/42", "#3 POST /users"] {
                #expect(process.standardError.contains("unused: \(unused)"))
            }
        }
    }
}

@Suite("Command line: binding")
struct BindingTests {
    @Test("binding to anything but loopback prints a warning")
    func nonLoopbackWarning() async throws {
        let process = try KakapoProcess([
            "replay", "--cassette", CLITests.demoCassette, "--port", "0", "--host", "0.0.0.0",
        ])
        _ = try await process.waitUntilListening()
        process.send(SIGTERM)
        #expect(try await process.waitForExit() == 0)
        #expect(process.standardError.contains("not loopback"))
        #expect(process.standardOutput.hasPrefix("kakapo listening on http://0.0.0.0:"))
    }
}
