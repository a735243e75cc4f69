import Foundation
import KakapoHTTP
import KakapoTestSupport
import Testing

/// `kakapo exec -- COMMAND` with the built binary, and a shell script, Python scripts and pytest as the
/// command: exit statuses, Kakapo's own statuses, `--ci`, signals, and the variables the command sees.
@Suite("Command line: kakapo exec")
struct ExecTests {
    static let python = CLITests.packageRoot + "/.build/python-venv/bin/python"
    static let pytest = CLITests.packageRoot + "/.build/python-venv/bin/pytest"

    /// A cassette answering `GET` on each of `urls` with `{"id":"N"}`, N the last path segment.
    static func cassette(_ path: String, urls: [String] = ["/users/1", "/users/2"]) throws -> String {
        let interactions = urls.map { url in
            let id = url.split(separator: "/").last.map(String.init) ?? ""
            return """
                {"request": {"method": "GET", "url": "\(url)", "headers": []},
                 "response": {"status": 200, "headers": [["Content-Type", "application/json"]],
                              "body": {"text": "{\\"id\\":\\"\(id)\\"}"}},
                 "recordedAt": "2026-11-22T06:41:44.312Z", "durationMs": 1}
                """
        }
        let text = #"{"version": 1, "interactions": ["# + interactions.joined(separator: ",\n") + "]}"
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// Writes `text` to `name` in `directory` and returns its path.
    static func file(_ name: String, in directory: String, _ text: String) throws -> String {
        let path = directory + "/" + name
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// A shell script that fetches `$KAKAPO_URL$2` (default /users/1) with curl, prints it and exits `$1`.
    static func fetchScript(in directory: String) throws -> String {
        try file(
            "fetch.sh", in: directory,
            """
            #!/bin/sh
            body=$(curl -sS --max-time 20 "$KAKAPO_URL${2:-/users/1}") || exit 99
            echo "child: $body"
            exit "$1"
            """)
    }

    /// Runs `kakapo exec ARGUMENTS -- COMMAND` to its end.
    static func exec(_ arguments: [String], _ command: [String], directory: String? = nil) async throws -> (
        status: Int32, output: String, error: String
    ) {
        try await KakapoProcess.run(["exec"] + arguments + ["--"] + command, directory: directory)
    }

    @Test("passes the command's exit status through (0, 1, 7); the command's output is its own")
    func exitStatuses() async throws {
        let directory = try Fixtures.temporaryDirectory()
        let cassette = try Self.cassette(directory + "/users.json")
        let script = try Self.fetchScript(in: directory)
        for code in [0, 1, 7] {
            let run = try await Self.exec(["--ci", "--cassette", cassette], ["sh", script, "\(code)"])
            #expect(run.status == Int32(code), "\(run.error)")
            // Standard output is the command's alone: Kakapo's listening line and summary are on standard error.
            #expect(run.output == #"child: {"id":"1"}"# + "\n")
            #expect(run.error.contains("kakapo listening on http://127.0.0.1:"))
            #expect(!run.error.contains("listening on http://127.0.0.1:8080"))
            #expect(run.error.contains("replayed 1, missed 0"))
        }
    }

    @Test("a miss when the command exits 0 exits 5 and says why")
    func missWithPassingCommand() async throws {
        let directory = try Fixtures.temporaryDirectory()
        let cassette = try Self.cassette(directory + "/users.json")
        let script = try Self.file(
            "miss.py", in: directory,
            """
            import os, urllib.error, urllib.request
            try:
                urllib.request.urlopen(os.environ["KAKAPO_URL"] + "/users/3", timeout=20)
            except urllib.error.HTTPError as error:
                print("child got", error.code)
            """)
        let run = try await Self.exec(["--ci", "--cassette", cassette], [Self.python, script])
        #expect(run.status == 5, "\(run.error)")
        #expect(run.output == "child got 404\n")
        #expect(run.error.contains("miss: GET /users/3"))
        #expect(run.error.contains("the command exited 0, but 1 request missed"))
        // A command that fails keeps its own status, miss or not.
        let failing = try Self.file("fail.sh", in: directory, "curl -s \"$KAKAPO_URL/users/3\" >/dev/null; exit 1\n")
        let failed = try await Self.exec(["--ci", "--cassette", cassette], ["sh", failing])
        #expect(failed.status == 1, "\(failed.error)")
        #expect(failed.error.contains("miss: GET /users/3"))
    }

    @Test("--fail-on-unused exits 6 when the command exits 0 but a recording was never used")
    func failOnUnused() async throws {
        let directory = try Fixtures.temporaryDirectory()
        let cassette = try Self.cassette(directory + "/users.json")
        let script = try Self.fetchScript(in: directory)
        let run = try await Self.exec(["--ci", "--fail-on-unused", "--cassette", cassette], ["sh", script, "0"])
        #expect(run.status == 6, "\(run.error)")
        #expect(run.error.contains("unused: #1 GET /users/2"))
        #expect(run.error.contains("1 recording was never used (--fail-on-unused)"))
        // Every recording used: 0.
        let both = try Self.file(
            "both.sh", in: directory, "sh \(script) 0 /users/1 && sh \(script) 0 /users/2\n")
        let used = try await Self.exec(["--ci", "--fail-on-unused", "--cassette", cassette], ["sh", both])
        #expect(used.status == 0, "\(used.error)")
    }

    @Test("--ci fails before running the command when the cassette is missing, and refuses modes that record")
    func ciRefusals() async throws {
        let directory = try Fixtures.temporaryDirectory()
        let marker = directory + "/ran"
        let missing = try await Self.exec(
            ["--ci", "--cassette", directory + "/absent.json"], ["touch", marker])
        #expect(missing.status == 3)
        #expect(missing.error.contains("the cassette \(directory)/absent.json does not exist"))
        #expect(!FileManager.default.fileExists(atPath: marker))
        let cassette = try Self.cassette(directory + "/users.json")
        for mode in ["new", "all", "once", "passthrough"] {
            let refused = try await Self.exec(
                ["--ci", "--mode", mode, "--upstream", "http://127.0.0.1:9", "--cassette", cassette],
                ["touch", marker])
            #expect(refused.status == 2, "\(mode): \(refused.error)")
            #expect(refused.error.contains("--mode \(mode)"), "\(refused.error)")
            #expect(!FileManager.default.fileExists(atPath: marker))
        }
        let noCommand = try await KakapoProcess.run(["exec", "--ci", "--cassette", cassette])
        #expect(noCommand.status == 2)
        #expect(noCommand.error.contains("give the command to run after --"))
    }

    @Test("SIGINT and SIGTERM sent to kakapo exec reach the command, and its status is kakapo's")
    func signalsReachTheCommand() async throws {
        let directory = try Fixtures.temporaryDirectory()
        let cassette = try Self.cassette(directory + "/users.json")
        let script = try Self.file(
            "trap.py", in: directory,
            """
            import signal, sys, time
            def stop(number, frame):
                with open(sys.argv[1], "w") as marker:
                    marker.write(signal.Signals(number).name)
                print("child stopping", flush=True)
                sys.exit(40 + number)
            signal.signal(signal.SIGINT, stop)
            signal.signal(signal.SIGTERM, stop)
            print("ready", flush=True)
            time.sleep(120)
            sys.exit(1)
            """)
        for (signal, name) in [(SIGINT, "SIGINT"), (SIGTERM, "SIGTERM")] {
            let marker = directory + "/" + name
            let process = try KakapoProcess(
                ["exec", "--ci", "--cassette", cassette, "--", Self.python, script, marker])
            // The whole line: print may write "ready" and its newline apart, and a signal between the two
            // runs the handler before the newline is written.
            try await Self.waitFor("ready\n", in: process)
            process.send(signal)
            let status = try await process.waitForExit()
            #expect(status == 40 + signal, "\(process.standardError)")
            #expect((try? String(contentsOfFile: marker, encoding: .utf8)) == name)
            #expect(process.standardOutput == "ready\nchild stopping\n")
            // Kakapo stopped gracefully after the command: its summary is there.
            #expect(process.standardError.contains("kakapo: 0 requests"))
        }
        // A command that does not catch the signal dies of it: 128 + the signal, as a shell says.
        let sleeper = try KakapoProcess(
            ["exec", "--ci", "--cassette", cassette, "--", "sh", "-c", "echo ready; exec sleep 120"])
        try await Self.waitFor("ready\n", in: sleeper)
        sleeper.send(SIGTERM)
        #expect(try await sleeper.waitForExit() == 128 + SIGTERM)
    }

    struct Timeout: Error, CustomStringConvertible {
        let description: String
    }

    /// Waits until `text` appears on the process's standard output.
    static func waitFor(_ text: String, in process: KakapoProcess) async throws {
        let deadline = ContinuousClock.now + .seconds(60)
        while !process.standardOutput.contains(text) {
            guard ContinuousClock.now < deadline else {
                throw Timeout(description: "no \"\(text)\" within a minute: \(process.standardError)")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    @Test("the command reaches $KAKAPO_URL directly even with HTTP_PROXY set, through NO_PROXY")
    func reverseModeVariables() async throws {
        let directory = try Fixtures.temporaryDirectory()
        let cassette = try Self.cassette(directory + "/users.json")
        let script = try Self.file(
            "env.py", in: directory,
            """
            import os, subprocess
            import requests
            url = os.environ["KAKAPO_URL"]
            print("no_proxy", os.environ["NO_PROXY"], os.environ["no_proxy"])
            print("proxy set", any(name in os.environ for name in ("HTTPS_PROXY", "https_proxy")))
            print("ca", os.environ.get("SSL_CERT_FILE"))
            # A proxy of the user's that cannot reach Kakapo: NO_PROXY keeps Kakapo's address direct.
            os.environ["HTTP_PROXY"] = os.environ["http_proxy"] = "http://127.0.0.1:9"
            print("requests", requests.get(url + "/users/1", timeout=20).text)
            curl = subprocess.run(["curl", "-sS", "--max-time", "20", url + "/users/2"], capture_output=True, text=True)
            print("curl", curl.stdout, curl.stderr.strip())
            """)
        let run = try await Self.exec(["--ci", "--cassette", cassette], [Self.python, script])
        #expect(run.status == 0, "\(run.output)\(run.error)")
        let lines = run.output.split(separator: "\n").map(String.init)
        #expect(lines.first?.hasPrefix("no_proxy ") == true)
        #expect(lines.first?.contains("127.0.0.1") == true)
        #expect(lines.dropFirst().first == "proxy set False")
        // Without --proxy or --tls Kakapo presents no certificate of its own: the CA variables stay as they were.
        #expect(lines.dropFirst(2).first == "ca \(ProcessInfo.processInfo.environment["SSL_CERT_FILE"] ?? "None")")
        #expect(lines.contains(#"requests {"id":"1"}"#), "\(run.output)")
        #expect(lines.contains(#"curl {"id":"2"} "#), "\(run.output)")
    }

    @Test("with --proxy the command goes through Kakapo and trusts its CA through the CA variables")
    func forwardModeVariables() async throws {
        let directory = try Fixtures.temporaryDirectory()
        let cassette = try Self.cassette(
            directory + "/proxy.json", urls: ["https://example.test/users/1", "http://example.test/users/2"])
        let caDirectory = directory + "/ca"
        let script = try Self.file(
            "proxy.py", in: directory,
            """
            import os, subprocess, sys
            import requests
            url = os.environ["KAKAPO_URL"]
            kakapo_ca = open(sys.argv[1]).read().strip()
            print("proxies", all(os.environ[name] == url for name in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy")))
            for name in ("SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "NODE_EXTRA_CA_CERTS", "AWS_CA_BUNDLE"):
                bundle = open(os.environ[name]).read()
                print(name, bundle.count("BEGIN CERTIFICATE") > 1 and kakapo_ca in bundle)
            print("https", requests.get("https://example.test/users/1", timeout=20).text)
            print("http", requests.get("http://example.test/users/2", timeout=20).text)
            print("admin", requests.get(url + "/__kakapo/health", timeout=20).status_code)
            curl = subprocess.run(["curl", "-sS", "--max-time", "20", "https://example.test/users/1"], capture_output=True, text=True)
            print("curl", curl.stdout, curl.stderr.strip())
            """)
        let run = try await Self.exec(
            ["--ci", "--proxy", "--ca-dir", caDirectory, "--cassette", cassette],
            [Self.python, script, caDirectory + "/kakapo-ca.pem"])
        #expect(run.status == 0, "\(run.output)\(run.error)")
        #expect(
            run.output == """
                proxies True
                SSL_CERT_FILE True
                REQUESTS_CA_BUNDLE True
                CURL_CA_BUNDLE True
                NODE_EXTRA_CA_CERTS True
                AWS_CA_BUNDLE True
                https {"id":"1"}
                http {"id":"2"}
                admin 200
                curl {"id":"1"} \n
                """, "\(run.error)")
        #expect(run.error.contains("replayed 3, missed 0"))
    }

    @Test("a recording run with --upstream writes the cassette the next --ci run replays, without the upstream")
    func recordThenReplay() async throws {
        let directory = try Fixtures.temporaryDirectory()
        let upstream = try await TestUpstream.start { request in
            .response(
                HTTP.Response(
                    status: 200, contentType: "application/json",
                    text: #"{"id":"\#(request.path.split(separator: "/").last ?? "")"}"#))
        }
        defer { Task { await upstream.stop() } }
        let cassette = directory + "/recorded.json"
        let script = try Self.fetchScript(in: directory)
        let recording = try await Self.exec(
            ["--upstream", upstream.baseURL, "--cassette", cassette], ["sh", script, "0", "/users/5"])
        #expect(recording.status == 0, "\(recording.error)")
        #expect(recording.output == #"child: {"id":"5"}"# + "\n")
        #expect(recording.error.contains("recorded 1 interaction to \(cassette)"))
        #expect(upstream.received.count == 1)
        // The same command line with --ci: replayed, and the upstream hears nothing, even for a miss.
        let replay = try await Self.exec(
            ["--ci", "--upstream", upstream.baseURL, "--cassette", cassette], ["sh", script, "0", "/users/5"])
        #expect(replay.status == 0, "\(replay.error)")
        #expect(replay.output == recording.output)
        let miss = try await Self.exec(
            ["--ci", "--upstream", upstream.baseURL, "--cassette", cassette], ["sh", script, "0", "/users/6"])
        #expect(miss.status == 5, "\(miss.error)")
        #expect(upstream.received.count == 1)
    }

    @Test("--cassette-dir: the command opens a session through $KAKAPO_URL; --ci sessions cannot record")
    func sessions() async throws {
        let directory = try Fixtures.temporaryDirectory()
        try FileManager.default.createDirectory(atPath: directory + "/s", withIntermediateDirectories: true)
        _ = try Self.cassette(directory + "/s/users.json")
        let script = try Self.file(
            "session.py", in: directory,
            """
            import json, os, urllib.error, urllib.request
            base = os.environ["KAKAPO_URL"]
            def call(method, path, body=None, headers={}):
                data = json.dumps(body).encode() if body is not None else None
                request = urllib.request.Request(base + path, method=method, data=data, headers={"Content-Type": "application/json", **headers})
                try:
                    with urllib.request.urlopen(request, timeout=20) as answer:
                        return answer.status, answer.read().decode()
                except urllib.error.HTTPError as error:
                    return error.code, error.read().decode()
            status, text = call("POST", "/__kakapo/sessions", {"cassette": "s/users.json"})
            session = json.loads(text)["id"]
            print("open", status)
            print("get", *call("GET", "/users/1", headers={"X-Kakapo-Session": session}))
            status, text = call("DELETE", "/__kakapo/sessions/" + session)
            print("close", status, json.loads(text)["replayed"])
            print("record", call("POST", "/__kakapo/sessions", {"cassette": "s/new.json", "mode": "new"})[0])
            """)
        let run = try await Self.exec(["--ci", "--cassette-dir", directory], [Self.python, script])
        #expect(run.status == 0, "\(run.output)\(run.error)")
        #expect(run.output == "open 201\n" + #"get 200 {"id":"1"}"# + "\nclose 200 1\nrecord 400\n")
        #expect(!FileManager.default.fileExists(atPath: directory + "/s/new.json"))
        // A miss inside a session counts like any other.
        let missing = try Self.file(
            "session-miss.py", in: directory,
            """
            import json, os, urllib.error, urllib.request
            base = os.environ["KAKAPO_URL"]
            opening = urllib.request.Request(base + "/__kakapo/sessions", method="POST", data=b'{"cassette": "s/users.json"}', headers={"Content-Type": "application/json"})
            session = json.load(urllib.request.urlopen(opening, timeout=20))["id"]
            try:
                urllib.request.urlopen(urllib.request.Request(base + "/users/9", headers={"X-Kakapo-Session": session}), timeout=20)
            except urllib.error.HTTPError as error:
                print("miss", error.code)
            """)
        let missed = try await Self.exec(["--ci", "--cassette-dir", directory], [Self.python, missing])
        #expect(missed.status == 5, "\(missed.output)\(missed.error)")
        #expect(missed.output == "miss 404\n")
        #expect(missed.error.contains("miss: GET /users/9"))
    }

    @Test("pytest as the command: its status passes through, and unused recordings fail a passing run")
    func pytestRun() async throws {
        let directory = try Fixtures.temporaryDirectory()
        let cassette = try Self.cassette(directory + "/users.json")
        _ = try Self.file(
            "test_users.py", in: directory,
            """
            import os, urllib.request

            def get(path):
                with urllib.request.urlopen(os.environ["KAKAPO_URL"] + path, timeout=20) as answer:
                    return answer.read().decode()

            def test_first_user():
                assert get("/users/1") == '{"id":"1"}'

            def test_second_user():
                assert get("/users/2") == os.environ.get("EXPECTED_SECOND", '{"id":"2"}')
            """)
        let arguments = ["--ci", "--fail-on-unused", "--cassette", cassette]
        let pytest = [Self.pytest, "-q", "-p", "no:cacheprovider", "-p", "no:kakapo", "test_users.py"]
        let passing = try await Self.exec(arguments, pytest, directory: directory)
        #expect(passing.status == 0, "\(passing.output)\(passing.error)")
        #expect(passing.output.contains("2 passed"))
        let failing = try await Self.exec(
            arguments, ["env", #"EXPECTED_SECOND={"id":"9"}"#] + pytest, directory: directory)
        #expect(failing.status == 1, "\(failing.output)\(failing.error)")
        #expect(failing.output.contains("1 failed, 1 passed"))
        let oneTest = try await Self.exec(arguments, pytest + ["-k", "first"], directory: directory)
        #expect(oneTest.status == 6, "\(oneTest.output)\(oneTest.error)")
        #expect(oneTest.output.contains("1 passed"))
    }
}
