import Foundation
import Kakapo
import KakapoTestSupport
import Testing

/// The inspector's server side with the built binary and curl, as a user scripts it.
@Suite("Command line: the inspector's API")
struct InspectorCLITests {
    @Test("curl -N follows the events with the admin token; the page loads without it; the data does not")
    func followWithToken() async throws {
        let directory = try Fixtures.temporaryDirectory()
        let routes = directory + "/routes.json"
        try #"{"routes": [{"path": "/users/:id", "response": {"json": {"id": "{{params.id}}"}}}]}"#.write(
            toFile: routes, atomically: true, encoding: .utf8)
        let kakapo = try KakapoProcess(["serve", "--routes", routes, "--admin-token", "tok-78901", "--port", "0"])
        let port = try await kakapo.waitUntilListening()
        let base = "http://127.0.0.1:\(port)"
        let follower = Task {
            try await KakapoProcess.run(
                ["-sN", "--max-time", "3", "-H", "Authorization: Bearer tok-78901", base + "/__kakapo/events"],
                executable: "/usr/bin/curl")
        }
        try await Task.sleep(for: .milliseconds(500))
        let answered = try await SessionCLITests.curl([base + "/users/42"])
        #expect(answered.body == #"{"id":"42"}"#)
        let followed = try await follower.value
        #expect(followed.output.contains("event: request"), "\(followed.output)")
        #expect(followed.output.contains(#""target":"/users/42""#))
        #expect(followed.output.contains(#""url":"http://127.0.0.1:\#(port)/users/42""#))
        #expect(!followed.output.contains("/__kakapo/"))

        // On the proxy port the page redirects to the admin listener (the proxy port serves the app's pages).
        let page = try await SessionCLITests.curl(["-L", base + "/__kakapo/ui"])
        #expect(page.body.contains("<html") || page.body.contains("<!doctype") || page.body.contains("<!DOCTYPE"))
        let refused = try await SessionCLITests.curl([
            "-o", "/dev/null", "-w", "%{http_code}", base + "/__kakapo/events",
        ])
        #expect(refused.body == "401")
        kakapo.send(SIGTERM)
        #expect(try await kakapo.waitForExit() == 0)
    }

    @Test("an exchange saved from the inspector survives kill -9 and replays on the next start")
    func saveSurvivesKill() async throws {
        let upstream = try await TestUpstream.start { request in
            .response(
                HTTP.Response(
                    status: 200, headers: ["Content-Type": "application/json"],
                    body: Array("{\"path\":\"\(request.path)\"}".utf8)))
        }
        let cassette = try Fixtures.temporaryDirectory() + "/api.json"
        let recorder = try KakapoProcess([
            "serve", "--mode", "new", "--cassette", cassette, "--upstream", upstream.baseURL, "--passthrough",
            "/live/**", "--port", "0",
        ])
        let port = try await recorder.waitUntilListening()
        let base = "http://127.0.0.1:\(port)"
        _ = try await SessionCLITests.curl([base + "/recorded"])
        let live = try await SessionCLITests.curl(["-H", "Authorization: Bearer kill-secret", base + "/live/7"])
        #expect(live.source == "passthrough")
        var id: Int?
        for _ in 0..<50 where id == nil {
            let journal = try JSONParser.parse(
                Array(try await SessionCLITests.curl([base + "/__kakapo/requests"]).body.utf8))
            id = journal["requests"]?.arrayValue?.first { $0["url"] == "/live/7" }?["id"]?.numberValue?.intValue
        }
        let saved = try await SessionCLITests.curl([
            "-X", "POST", "-H", "Content-Type: application/json", "--data", "{}",
            base + "/__kakapo/requests/\(try #require(id))/save",
        ])
        #expect(saved.body.contains(#""interaction": 1"#), "\(saved.body)")
        recorder.send(SIGKILL)
        _ = try await recorder.waitForExit()
        await upstream.stop()

        let replayer = try KakapoProcess(["replay", "--cassette", cassette, "--port", "0"])
        let replayPort = try await replayer.waitUntilListening()
        let replayed = try await SessionCLITests.curl(["http://127.0.0.1:\(replayPort)/live/7"])
        #expect(replayed.source == "cassette", "\(replayed.body)\n\(replayer.standardError)")
        #expect(replayed.body == #"{"path":"/live/7"}"#)
        replayer.send(SIGTERM)
        _ = try await replayer.waitForExit()
        #expect(!(try String(contentsOfFile: cassette, encoding: .utf8)).contains("kill-secret"))
    }
}
