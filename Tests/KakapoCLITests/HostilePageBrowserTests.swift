import Foundation
import Kakapo
import KakapoTestSupport
import Testing

/// A page Kakapo serves for the app, replayed from a cassette, whose script goes for the admin API in a real
/// headless Chromium (Tests/InspectorBrowser/hostile_page.py): it must neither change Kakapo nor read files
/// nor the journal, from the proxy port (same origin) or the admin listener (another origin).
@Suite("Command line: no page Kakapo serves reaches its admin API", .serialized)
struct HostilePageBrowserTests {
    static let driver = CLITests.packageRoot + "/Tests/InspectorBrowser/hostile_page.py"

    /// The page's script: every way a page can try the admin API, the outcome of each in `document.title`.
    static let script = #"""
        (async () => {
          const results = {};
          const attempt = async (name, url, init) => {
            try {
              const answer = await fetch(url, init);
              let body = '';
              try { body = (await answer.text()).slice(0, 400); } catch (error) {}
              results[name] = {status: answer.status, type: answer.type, body};
            } catch (error) {
              results[name] = {error: String(error)};
            }
          };
          const json = (body) => ({method: 'POST', headers: {'Content-Type': 'application/json'}, body: JSON.stringify(body)});
          await attempt('addRoute', '/__kakapo/routes', json({id: 'leak', path: '/leak', response: {file: '.env'}}));
          await attempt('leak', '/leak', {});
          await attempt('journal', '/__kakapo/requests', {});
          await attempt('clearJournal', '/__kakapo/requests', {method: 'DELETE'});
          await attempt('session', '/__kakapo/sessions', json({cassette: 'x.json'}));
          await attempt('inspector', '/__kakapo/ui', {});
          await attempt('health', '/__kakapo/health', {});
          let admin = null;
          try { admin = JSON.parse(results.health.body).listeners.admin; } catch (error) {}
          results.adminPort = admin;
          if (admin) {
            const base = `http://${location.hostname}:${admin}`;
            await attempt('adminCors', base + '/__kakapo/routes', json({id: 'leak2', path: '/leak2', response: {file: '.env'}}));
            await attempt('adminSimple', base + '/__kakapo/routes', {method: 'POST', mode: 'no-cors',
              headers: {'Content-Type': 'text/plain'}, body: JSON.stringify({id: 'leak3', path: '/leak3', response: {file: '.env'}})});
            await attempt('adminJournal', base + '/__kakapo/requests', {});
          }
          document.title = 'DONE ' + JSON.stringify(results);
        })();
        """#

    /// The cassette: `GET /app` answers the hostile page, as a recording of a hostile upstream would.
    static func cassette(in directory: String) throws -> String {
        let page =
            "<!doctype html><html><head><title>loading</title></head><body><script>\(script)</script></body></html>"
        let cassette: [String: Any] = [
            "version": 1,
            "interactions": [
                [
                    "request": ["method": "GET", "url": "/app", "headers": [[String]]()],
                    "response": [
                        "status": 200, "headers": [["Content-Type", "text/html; charset=utf-8"]],
                        "body": ["text": page],
                    ],
                ]
            ],
        ]
        let path = directory + "/page.json"
        try JSONSerialization.data(withJSONObject: cassette).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test(
        "a replayed page's script, opened as 127.0.0.1 and as localhost, gets 403 from every admin endpoint but health, cannot reach the admin listener, and changes and reads nothing",
        .enabled(
            if: InspectorBrowserTests.shouldRun,
            "chromium, chromium-driver or selenium is missing: run tools/browser.sh install"),
        .timeLimit(.minutes(2)))
    func replayedPage() async throws {
        try #require(
            InspectorBrowserTests.missing.isEmpty,
            "CI=true and \(InspectorBrowserTests.missing.joined(separator: ", ")) missing: run tools/browser.sh install"
        )
        let directory = try Fixtures.temporaryDirectory()
        try FileManager.default.createDirectory(atPath: directory + "/sessions", withIntermediateDirectories: true)
        let secret = "SECRET_KEY=kakapo-env-8d1f"
        try (secret + "\n").write(toFile: directory + "/.env", atomically: true, encoding: .utf8)
        let cassette = try Self.cassette(in: directory)
        // Run in the folder that holds .env, as a developer runs it; sessions on, so that endpoint exists too.
        let kakapo = try KakapoProcess(
            ["replay", "--cassette", cassette, "--cassette-dir", "sessions", "--port", "0"], directory: directory)
        let port = try await kakapo.waitUntilListening()
        let client = try TestClient(port: port)
        defer { client.shutdown() }
        let health =
            try JSONSerialization.jsonObject(
                with: Data(try await client.send(.get, "/__kakapo/health").body)) as? [String: Any]
        let adminPort = try #require((health?["listeners"] as? [String: Any])?["admin"] as? Int)

        for host in ["127.0.0.1", "localhost"] {
            let browser = try KakapoProcess(
                [Self.driver, "http://\(host):\(port)/app"], executable: InspectorBrowserTests.python)
            let exit = try await browser.waitForExit(timeout: .seconds(90))
            #expect(exit == 0, "\(host): the driver exited \(exit): \(browser.standardError)")
            let line = browser.standardOutput.split(separator: "\n").first { $0.hasPrefix("RESULT ") }
            let results = try #require(
                line.flatMap { try? JSONSerialization.jsonObject(with: Data($0.dropFirst(7).utf8)) } as? [String: Any],
                "\(host): no result: \(browser.standardOutput) \(browser.standardError)")
            func status(_ name: String) -> Int? { (results[name] as? [String: Any])?["status"] as? Int }
            func body(_ name: String) -> String { (results[name] as? [String: Any])?["body"] as? String ?? "" }
            // Same origin, the proxy port: refused, saying why and where pages may go.
            for name in ["addRoute", "journal", "clearJournal", "session"] {
                #expect(status(name) == 403, "\(host) \(name): \(results[name] ?? "nothing")")
                #expect(body(name).contains("do not answer a web page's request"), "\(host) \(name): \(body(name))")
            }
            #expect(status("leak") != 200 && !body("leak").contains("kakapo-env"), "\(host): \(results["leak"] ?? "")")
            // The inspector is not on this origin: it redirects to the admin listener, which the page may not read.
            #expect(results["inspector"].flatMap { ($0 as? [String: Any])?["error"] } != nil, "\(host): \(results)")
            #expect(status("health") == 200)
            #expect(results["adminPort"] as? Int == adminPort)
            // Another origin, the admin listener: CORS blocks what needs it, and a simple request is refused.
            #expect((results["adminCors"] as? [String: Any])?["error"] != nil, "\(host): \(results["adminCors"] ?? "")")
            #expect((results["adminJournal"] as? [String: Any])?["error"] != nil, "\(host): \(results)")
            #expect((results["adminSimple"] as? [String: Any])?["type"] as? String == "opaque", "\(host): \(results)")
        }
        // Nothing changed: no runtime route, the journal still holds the page's requests, no session.
        let routes = try await client.send(.get, "/__kakapo/routes")
        #expect(routes.status == 200)
        #expect(!routes.text.contains("leak"), "\(routes.text)")
        let journal = try await client.send(.get, "/__kakapo/requests")
        #expect(journal.text.contains("/app"), "\(journal.text.prefix(300))")
        let sessions = try await client.send(.get, "/__kakapo/sessions")
        #expect(sessions.status == 200 && !sessions.text.contains("x.json"), "\(sessions.text)")
        // The admin listener answers Kakapo's endpoints only: the page is not there.
        let admin = try TestClient(port: adminPort)
        defer { admin.shutdown() }
        #expect(try await admin.send(.get, "/app").status == 404)
        #expect(try await admin.send(.get, "/__kakapo/health").status == 200)
        kakapo.send(SIGINT)
        _ = try await kakapo.waitForExit()
        #expect(kakapo.standardError.contains("inspector and admin API for pages: http://127.0.0.1:\(adminPort)"))
    }
}
