import Foundation
import Kakapo
import KakapoTestSupport
import Testing

/// Numbers, YAML and tokens from outside, given to the built binary as a user gives them: each is refused
/// with a message naming what is wrong and where, never a crash.
@Suite("Trust: numbers and files from outside (command line)")
struct TrustNumbersCLITests {
    static func write(_ text: String, name: String) throws -> String {
        let path = try Fixtures.temporaryDirectory() + "/" + name
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test(
        "routes lint refuses a latency too large to schedule, naming the key, instead of crashing",
        arguments: ["1e300", "10000000000000", "1e400", "\"1e300s\"", "\"3601s\""])
    func hugeLatency(latency: String) async throws {
        let file = try Self.write(
            #"{"routes": [{"path": "/a", "latency": \#(latency), "response": {}}]}"#, name: "routes.json")
        let result = try await KakapoProcess.run(["routes", "lint", file])
        #expect(result.status == 3, "\(result.error)")
        #expect(result.error.contains("routes[0].latency: expected a duration from 0 to 1 hour"), "\(result.error)")
    }

    @Test(
        "cassette lint calls a chunk offset or duration of 1e300 invalid, naming file and line",
        arguments: ["offsetMs", "durationMs"])
    func hugeCassetteTimes(field: String) async throws {
        let offset = field == "offsetMs" ? "1e300" : "0"
        let duration = field == "durationMs" ? "1e300" : "5"
        let cassette = """
            {
              "version": 1,
              "interactions": [
                {
                  "request": {"method": "GET", "url": "/events", "headers": []},
                  "response": {"status": 200, "headers": [["Content-Type", "text/event-stream"]],
                               "chunks": [{"offsetMs": \(offset), "text": "data: 1\\n\\n"}]},
                  "recordedAt": "2026-01-01T00:00:00Z",
                  "durationMs": \(duration)
                }
              ]
            }
            """
        let file = try Self.write(cassette, name: "stream.json")
        let result = try await KakapoProcess.run(["cassette", "lint", file])
        #expect(result.status == 3, "\(result.output) \(result.error)")
        #expect(result.error.contains("stream.json:"), "\(result.error)")
        #expect(result.error.contains("\(field)") && result.error.contains("a week"), "\(result.error)")
        let replay = try await KakapoProcess.run(["replay", "--cassette", file, "--port", "0"])
        #expect(replay.status == 3, "\(replay.error)")
    }

    @Test(
        "a number flag out of range is a usage error naming the flag and its range",
        arguments: [
            ["replay", "--idle-timeout", "1e300"], ["replay", "--request-read-timeout", "1e300"],
            ["replay", "--max-age", "1e400d"], ["replay", "--max-age", "1e300s"],
            ["record", "--upstream", "http://127.0.0.1:9", "--connect-timeout", "1e300"],
            ["record", "--upstream", "http://127.0.0.1:9", "--timeout", "1e300"],
            ["replay", "--idle-timeout", "nan"], ["replay", "--max-body-size", "9223372036854775807"],
        ])
    func hugeFlags(arguments: [String]) async throws {
        let cassette = try Fixtures.temporaryDirectory() + "/c.json"
        let flag = arguments[arguments.count - 2]
        let result = try await KakapoProcess.run(arguments + ["--cassette", cassette, "--port", "0"])
        #expect(result.status == 2, "\(arguments): \(result.error)")
        #expect(result.error.contains(flag), "\(result.error)")
        #expect(result.error.contains("at most") || result.error.contains(" to "), "\(result.error)")
    }

    @Test("a billion-laughs YAML routes file is refused at its first anchor, quickly and in little memory")
    func billionLaughsLint() async throws {
        let file = try Self.write(Self.billionLaughs, name: "laughs.yaml")
        let started = ContinuousClock.now
        let result = try await KakapoProcess.run(["routes", "lint", file])
        // The message below shows the refusal came at the first anchor, before any expansion; the bound
        // only catches an expansion (minutes and gigabytes), with room for a busy 2-core machine (11 s seen).
        #expect(ContinuousClock.now - started < .seconds(60))
        #expect(result.status == 3, "\(result.error)")
        #expect(result.error.contains("laughs.yaml:4:13: YAML anchors (&a) are not supported"), "\(result.error)")
    }

    @Test("a YAML anchor and alias, even a harmless one, is refused naming file, line and column")
    func anchorAndAlias() async throws {
        let file = try Self.write(
            "routes:\n  - path: /a\n    response: &shared {text: hi}\n  - path: /b\n    response: *shared\n",
            name: "alias.yaml")
        let result = try await KakapoProcess.run(["routes", "lint", file])
        #expect(result.status == 3, "\(result.output)")
        #expect(result.error.contains("alias.yaml:3:15: YAML anchors (&shared) are not supported"), "\(result.error)")
    }

    @Test("a watched routes file swapped for a billion-laughs one is refused; the routes in force keep answering")
    func billionLaughsWatched() async throws {
        let file = try Self.write("routes:\n  - path: /v\n    response: {text: small}\n", name: "routes.yaml")
        let process = try KakapoProcess(["serve", "--routes", file, "--port", "0"])
        let client = try TestClient(port: try await process.waitUntilListening())
        #expect(try await client.send(.get, "/v").text == "small")
        try Self.billionLaughs.write(toFile: file, atomically: true, encoding: .utf8)
        let deadline = ContinuousClock.now + .seconds(10)
        while !process.standardError.contains("not reloaded") && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(process.standardError.contains("YAML anchors (&a) are not supported"), "\(process.standardError)")
        let answer = try await client.send(.get, "/v")
        #expect(answer.text == "small")
        if let memory = process.memory { #expect(memory.peak < 500 << 20, "peak \(memory.peak >> 20) MiB") }
        client.shutdown()
        process.send(SIGTERM)
        #expect(try await process.waitForExit() == 0)
    }

    /// Nine levels of ten aliases each: a billion strings once expanded, under 1 KB as written. The first
    /// anchor is at line 4, column 13.
    static let billionLaughs: String = {
        var text = "routes:\n"
        let names = ["a", "b", "c", "d", "e", "f", "g", "h", "i"]
        for (index, name) in names.enumerated() {
            let items =
                index == 0
                ? Array(repeating: "\"lol\"", count: 10) : Array(repeating: "*\(names[index - 1])", count: 10)
            text += "  - path: /\(name)\n    response:\n      json: &\(name) [" + items.joined(separator: ",") + "]\n"
        }
        return text
    }()

    @Test("the admin token can come from a file or KAKAPO_ADMIN_TOKEN instead of argv; both flags is a usage error")
    func adminTokenSources() async throws {
        let directory = try Fixtures.temporaryDirectory()
        let tokenFile = directory + "/token"
        try "  s3cret-token-from-file  \nsecond line\n".write(toFile: tokenFile, atomically: true, encoding: .utf8)
        let routes = directory + "/routes.json"
        try #"{"routes": []}"#.write(toFile: routes, atomically: true, encoding: .utf8)
        let process = try KakapoProcess(["serve", "--routes", routes, "--admin-token-file", tokenFile, "--port", "0"])
        let client = try TestClient(port: try await process.waitUntilListening())
        #expect(try await client.send(.get, "/__kakapo/health").status == 401)
        #expect(
            try await client.send(
                .get, "/__kakapo/health", headers: ["Authorization": "Bearer s3cret-token-from-file"]
            ).status == 200)
        client.shutdown()
        process.send(SIGTERM)
        _ = try await process.waitForExit()

        let environment = try KakapoProcess(
            [
                "KAKAPO_ADMIN_TOKEN=token-from-environment", KakapoProcess.binary, "serve", "--routes", routes,
                "--port", "0",
            ],
            executable: "/usr/bin/env")
        let environmentClient = try TestClient(port: try await environment.waitUntilListening())
        #expect(try await environmentClient.send(.get, "/__kakapo/health").status == 401)
        #expect(
            try await environmentClient.send(
                .get, "/__kakapo/health", headers: ["Authorization": "Bearer token-from-environment"]
            ).status == 200)
        environmentClient.shutdown()
        environment.send(SIGTERM)
        _ = try await environment.waitForExit()

        let both = try await KakapoProcess.run([
            "serve", "--routes", routes, "--admin-token", "argv-token-123", "--admin-token-file", tokenFile, "--port",
            "0",
        ])
        #expect(both.status == 2)
        #expect(both.error.contains("--admin-token and --admin-token-file cannot be given together"), "\(both.error)")
        let short = directory + "/short"
        try "abc\n".write(toFile: short, atomically: true, encoding: .utf8)
        let tooShort = try await KakapoProcess.run([
            "serve", "--routes", routes, "--admin-token-file", short, "--port", "0",
        ])
        #expect(tooShort.status == 2)
        #expect(tooShort.error.contains("at least 8 characters"), "\(tooShort.error)")
        // A token must be visible characters: eight spaces (from the environment, where nothing trims them),
        // or one with a tab or a space inside, is refused at start, never accepted.
        for (name, arguments) in [
            ("spaces in the environment", ["KAKAPO_ADMIN_TOKEN=        "]),
            ("a tab inside", ["KAKAPO_ADMIN_TOKEN=abcd\tefgh"]),
            ("a space inside", ["KAKAPO_ADMIN_TOKEN=abcd efgh"]),
        ] {
            let blank = try await KakapoProcess.run(
                arguments + [KakapoProcess.binary, "serve", "--routes", routes, "--port", "0"],
                executable: "/usr/bin/env")
            #expect(blank.status == 2, "\(name)")
            #expect(blank.error.contains("must be visible ASCII characters"), "\(name): \(blank.error)")
        }
        let missing = try await KakapoProcess.run([
            "serve", "--routes", routes, "--admin-token-file", directory + "/none", "--port", "0",
        ])
        #expect(missing.status == 2)
        let help = try await KakapoProcess.run(["serve", "--help"])
        #expect(help.output.contains("--admin-token-file"))
        #expect(help.output.contains("KAKAPO_ADMIN_TOKEN"))
    }
}
