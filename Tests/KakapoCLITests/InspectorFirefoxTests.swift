import Foundation
import KakapoTestSupport
import Testing

/// The inspector in headless Firefox (Debian's firefox-esr, driven through WebDriver BiDi by
/// Tests/InspectorJS/firefox_smoke.py: no geckodriver), against the built `kakapo serve`: the page's feed opens,
/// a curl request is listed, its detail opens, copy as curl fills its box, and the console stays clean. The
/// Chromium test (`InspectorBrowserTests`) checks the rest; this one keeps the page honest in the other engine.
@Suite("Command line: the inspector in Firefox")
struct InspectorFirefoxTests {
    static let script = CLITests.packageRoot + "/Tests/InspectorJS/firefox_smoke.py"
    static let hasFirefox = FileManager.default.isExecutableFile(atPath: "/usr/bin/firefox-esr")

    @Test(
        "in headless Firefox the page follows Kakapo live: a curl request is listed, its detail opens, copy as curl is filled, no console error",
        .enabled(
            if: hasFirefox || ProcessInfo.processInfo.environment["CI"] == "true",
            "firefox-esr is missing: run tools/browser.sh install"),
        .timeLimit(.minutes(1)))
    func firefox() async throws {
        try #require(Self.hasFirefox, "CI=true and firefox-esr is missing: run tools/browser.sh install")
        let upstream = try await InspectorBrowserTests.upstream()
        let kakapo = try KakapoProcess([
            "serve", "--mode", "passthrough", "--upstream", upstream.baseURL, "--port", "0",
        ])
        let port = try await kakapo.waitUntilListening()
        let curl = try await KakapoProcess.run(
            ["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "http://127.0.0.1:\(port)/live/ping"],
            executable: "/usr/bin/env")
        #expect(curl.output == "200", "curl: \(curl.output) \(curl.error)")
        let output = try Fixtures.temporaryDirectory()
        let smoke = try KakapoProcess(
            [Self.script, "http://127.0.0.1:\(port)", output + "/firefox.png"], executable: InspectorBrowserTests.python
        )
        let status = try await smoke.waitForExit(timeout: .seconds(45))
        #expect(
            status == 0,
            "firefox_smoke.py exited \(status) (77: no firefox-esr or websocket-client): \(smoke.standardOutput) \(smoke.standardError)"
        )
        #expect(smoke.standardOutput.contains("firefox_smoke: ok (1 rows"), "\(smoke.standardOutput)")
        kakapo.send(SIGINT)
        #expect(try await kakapo.waitForExit() == 0, "\(kakapo.standardError)")
        await upstream.stop()
    }
}
