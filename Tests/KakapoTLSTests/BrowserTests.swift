import Foundation
import KakapoTestSupport
import Testing

extension HTTPSTests {
    /// Headless Chromium (Debian's `chromium`) through `--proxy`, trusting Kakapo's CA through its NSS store
    /// (`certutil` from libnss3-tools), records an HTTPS page and the API call its script makes, then gets the
    /// same page from the cassette with the site stopped: the steps docs/browsers.md shows.
    @Suite("Browsers")
    struct BrowserTests {
        static let chromium = "/usr/bin/chromium"
        static let certutil = "/usr/bin/certutil"
        static let present =
            FileManager.default.isExecutableFile(atPath: chromium)
            && FileManager.default.isExecutableFile(atPath: certutil)

        static let site = """
            routes:
              - method: GET
                path: /
                response:
                  headers: {Content-Type: text/html; charset=utf-8}
                  text: "<!doctype html><title>Kiwi shop</title><h1>Kiwi shop</h1><p id=price>loading</p><script>fetch('/api/price').then(r => r.json()).then(p => document.getElementById('price').textContent = p.kiwi + ' NZD')</script>"
              - method: GET
                path: /api/price
                response:
                  json: {kiwi: 4.5}
            """

        /// Chromium's page after its scripts ran, with `HOME` (and so the NSS store) in `home`.
        static func dumpDOM(_ url: String, proxy: String, home: String) async throws -> String {
            let result = try await KakapoProcess.run(
                [
                    "HOME=\(home)", chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                    "--disable-background-networking", "--disable-component-update", "--disable-sync",
                    "--proxy-server=\(proxy)", "--proxy-bypass-list=<-loopback>", "--virtual-time-budget=5000",
                    "--dump-dom", url,
                ], executable: "/usr/bin/env")
            return result.output
        }

        @Test(
            "headless Chromium trusting Kakapo's CA through NSS records an HTTPS page through --proxy, then replays it",
            .enabled(if: present, "chromium and certutil are not installed (apt-get install chromium libnss3-tools)"))
        func recordAndReplayAPage() async throws {
            let directory = try Fixtures.temporaryDirectory()
            let home = directory + "/home"
            let caDirectory = directory + "/ca"
            let cassette = directory + "/shop.json"
            try FileManager.default.createDirectory(atPath: home + "/.pki/nssdb", withIntermediateDirectories: true)
            try Self.site.write(toFile: directory + "/site.routes.yaml", atomically: true, encoding: .utf8)
            let siteProcess = try KakapoProcess([
                "serve", "--routes", directory + "/site.routes.yaml", "--tls", "--ca-dir", directory + "/site-ca",
                "--port", "0",
            ])
            let sitePort = try await siteProcess.waitUntilListening()
            let page = "https://localhost:\(sitePort)/"
            // The steps `kakapo ca trust` prints for Chromium.
            let path = try await KakapoProcess.run(["ca", "path", "--ca-dir", caDirectory])
            #expect(path.output == caDirectory + "/kakapo-ca.pem\n")
            let nss = "sql:\(home)/.pki/nssdb"
            let created = try await KakapoProcess.run(
                ["-d", nss, "-N", "--empty-password"], executable: Self.certutil)
            #expect(created.status == 0, "\(created.error)")
            let added = try await KakapoProcess.run(
                ["-d", nss, "-A", "-t", "C,,", "-n", "kakapo", "-i", caDirectory + "/kakapo-ca.pem"],
                executable: Self.certutil)
            #expect(added.status == 0, "\(added.error)")

            let recorder = try KakapoProcess([
                "record", "--proxy", "--cassette", cassette, "--ca-dir", caDirectory, "--upstream-ca",
                directory + "/site-ca/kakapo-ca.pem", "--port", "0",
            ])
            let proxy = "http://127.0.0.1:\(try await recorder.waitUntilListening())"
            let recorded = try await Self.dumpDOM(page, proxy: proxy, home: home)
            #expect(recorded.contains(#"<p id="price">4.5 NZD</p>"#), "\(recorded)")
            recorder.send(SIGINT)
            #expect(try await recorder.waitForExit() == 0)
            #expect(!recorder.standardError.contains("did not trust"), "\(recorder.standardError)")
            let saved = try String(contentsOfFile: cassette, encoding: .utf8)
            #expect(saved.contains(#""url": "https://localhost:\#(sitePort)/api/price""#))
            siteProcess.send(SIGINT)
            #expect(try await siteProcess.waitForExit() == 0)

            let replayer = try KakapoProcess([
                "replay", "--proxy", "--cassette", cassette, "--ca-dir", caDirectory, "--port", "0",
            ])
            let replayProxy = "http://127.0.0.1:\(try await replayer.waitUntilListening())"
            let replayed = try await Self.dumpDOM(page, proxy: replayProxy, home: home)
            #expect(replayed.contains(#"<p id="price">4.5 NZD</p>"#), "\(replayed)")
            replayer.send(SIGINT)
            #expect(try await replayer.waitForExit() == 0)
            #expect(replayer.standardError.contains("GET https://localhost:\(sitePort)/api/price") == false)
            #expect(
                replayer.standardError.range(of: #"replayed [2-9]"#, options: .regularExpression) != nil,
                "\(replayer.standardError)")
        }
    }
}
