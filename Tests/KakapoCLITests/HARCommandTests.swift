import Foundation
import Kakapo
import KakapoTestSupport
import Testing

/// `kakapo cassette import-har` and `export-har`, run as a user runs them.
@Suite("Command line: HAR")
struct HARCommandTests {
    static let chrome = CLITests.packageRoot + "/Tests/KakapoHARTests/Fixtures/chrome.har"

    @Test("import-har redacts credentials before writing; export-har writes HAR 1.2 back")
    func importAndExport() async throws {
        let directory = try Fixtures.temporaryDirectory()
        let imported = try await KakapoProcess.run(["cassette", "import-har", Self.chrome, directory + "/api.json"])
        #expect(imported.status == 0, "\(imported.error)")
        #expect(imported.output.contains("3 interactions from"))
        #expect(imported.output.contains("redacted"), "\(imported.output)")
        let written = try String(contentsOfFile: directory + "/api.json", encoding: .utf8)
        for secret in ["eyJhbGciOi.secret.token", "abc123", "def456", "hunter22"] {
            #expect(!written.contains(secret), "\(secret) reached the cassette")
        }
        #expect(try await KakapoProcess.run(["cassette", "lint", directory + "/api.json"]).status == 0)

        let exported = try await KakapoProcess.run([
            "cassette", "export-har", directory + "/api.json", directory + "/api.har", "--scheme", "https",
        ])
        #expect(exported.status == 0, "\(exported.error)")
        let har = try JSONParser.parse(Array(try Data(contentsOf: URL(fileURLWithPath: directory + "/api.har"))))
        #expect(har["log"]?["version"] == "1.2")
        #expect(
            har["log"]?["entries"]?.arrayValue?.first?["request"]?["url"]
                == "https://api.example.com/v1/users?page=2&q=ada%20l")
    }

    @Test("one entry is counted in the singular, both ways")
    func singular() async throws {
        let directory = try Fixtures.temporaryDirectory()
        let file = directory + "/one.har"
        try
            #"{"log": {"entries": [{"request": {"method": "GET", "url": "http://a.test/x"}, "response": {"status": 204}}]}}"#
            .write(toFile: file, atomically: true, encoding: .utf8)
        let imported = try await KakapoProcess.run(["cassette", "import-har", file, directory + "/one.json"])
        #expect(imported.output.contains("one.json: 1 interaction from"), "\(imported.output)")
        let exported = try await KakapoProcess.run([
            "cassette", "export-har", directory + "/one.json", directory + "/back.har",
        ])
        #expect(exported.output.contains("back.har: 1 entry from"), "\(exported.output)")
    }

    @Test("an unreadable HAR exits 3 naming the entry and field")
    func invalid() async throws {
        let directory = try Fixtures.temporaryDirectory()
        let file = directory + "/bad.har"
        try #"{"log": {"entries": [{"request": {"method": "GET", "url": "http://a/"}, "response": {"status": "x"}}]}}"#
            .write(toFile: file, atomically: true, encoding: .utf8)
        let result = try await KakapoProcess.run(["cassette", "import-har", file, directory + "/out.json"])
        #expect(result.status == 3)
        #expect(result.error.contains("\(file):1:"), "\(result.error)")
        #expect(result.error.contains("log.entries[0].response.status: expected a whole number"), "\(result.error)")
        #expect(!FileManager.default.fileExists(atPath: directory + "/out.json"))
        #expect(
            try await KakapoProcess.run(["cassette", "export-har", "x.json", "y.har", "--scheme", "ftp"]).status == 2)
    }

    static let fixtures = CLITests.packageRoot + "/Tests/KakapoHARTests/Fixtures/"

    /// Fetches `url` with curl into a file and returns its exit status, stderr, the body bytes and the
    /// response's `Content-Encoding`.
    static func curl(_ url: String, compressed: Bool, directory: String) async throws -> (
        status: Int32, error: String, body: [UInt8], coding: String?
    ) {
        let body = directory + "/body", head = directory + "/head"
        try? FileManager.default.removeItem(atPath: body)
        let result = try await KakapoProcess.run(
            ["--silent", "--show-error", "--max-time", "10", "--dump-header", head, "--output", body]
                + (compressed ? ["--compressed"] : []) + [url],
            executable: "/usr/bin/curl")
        let headers = (try? String(contentsOfFile: head, encoding: .utf8)) ?? ""
        let coding = headers.split(separator: "\r\n").first { $0.lowercased().hasPrefix("content-encoding:") }
            .map { $0.dropFirst("content-encoding:".count).trimmingCharacters(in: .whitespaces) }
        let bytes = FileManager.default.contents(atPath: body).map { Array($0) } ?? []
        return (result.status, result.error, bytes, coding)
    }

    @Test(
        "a Chrome HAR with br and zstd and a mitmproxy HAR with deflate import into cassettes whose answers curl reads, with and without --compressed"
    )
    func codingsReplay() async throws {
        let directory = try Fixtures.temporaryDirectory()
        let chrome = try await KakapoProcess.run([
            "cassette", "import-har", Self.fixtures + "chrome-brotli.har", directory + "/shop.json",
        ])
        #expect(chrome.status == 0, "\(chrome.error)")
        #expect(
            chrome.output.contains("2 responses: content-encoding br written again from the decoded body"),
            "\(chrome.output)")
        #expect(
            chrome.output.contains("1 response: content-encoding zstd written again from the decoded body"),
            "\(chrome.output)")
        #expect(chrome.output.contains("1 response: Content-Length set to the length of the body replayed"))
        let mitmproxy = try await KakapoProcess.run([
            "cassette", "import-har", Self.fixtures + "mitmproxy-deflate.har", directory + "/api.json",
        ])
        #expect(mitmproxy.status == 0, "\(mitmproxy.error)")
        #expect(
            mitmproxy.output.contains("3 responses: content-encoding deflate written again from the decoded body"),
            "\(mitmproxy.output)")

        let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 0x0D, 0x49, 0x48, 0x44, 0x52]
        let cases: [(cassette: String, path: String, body: [UInt8])] = [
            (
                "shop.json", "/api/catalog?lang=en",
                Array(
                    #"[{"sku":"K-1","name":"Night parrot plush","price":24.5},{"sku":"K-2","name":"Moss mug","price":12}]"#
                        .utf8)
            ),
            ("shop.json", "/static/icon.png", png),
            ("shop.json", "/api/news", Array("Kakapo counted this season: 252 birds\n".utf8)),
            (
                "api.json", "/items",
                Array(
                    #"{"items":[{"id":1,"name":"kakapo"},{"id":2,"name":"kea"},{"id":3,"name":"kiwi"}],"total":3}"#.utf8
                )
            ),
            ("api.json", "/status", Array("status: qA.prRacCQuVqB, TWOL".utf8)),
            ("api.json", "/blob", [0, 1, 2, 3, 255, 254, 10, 13, 0, 0, 0, 7, 200, 100]),
        ]
        for cassette in ["shop.json", "api.json"] {
            let server = try KakapoProcess(["replay", "--cassette", directory + "/" + cassette, "--port", "0"])
            let port = try await server.waitUntilListening()
            for item in cases where item.cassette == cassette {
                for compressed in [true, false] {
                    let answer = try await Self.curl(
                        "http://127.0.0.1:\(port)\(item.path)", compressed: compressed, directory: directory)
                    #expect(answer.status == 0, "\(item.path) compressed: \(compressed): \(answer.error)")
                    var body = answer.body
                    if !compressed, let coding = answer.coding {
                        // Without --compressed curl hands over the wire's bytes: they must be in the coding named.
                        body = try #require(ContentCoding(header: coding)?.decode(body), "\(item.path): \(coding)")
                    }
                    #expect(body == item.body, "\(item.path) compressed: \(compressed)")
                    // The recorded coding (br, zstd, deflate) goes to a client that accepts it. One that does not
                    // gets the body decoded, with its own Content-Length (curl fails on a wrong one), where the
                    // recorded request asked for the coding (the mitmproxy HAR's); where it did not (some of the
                    // Chrome HAR's), the server sent it unasked and so does the replay: decoded above.
                    let recorded = cassette == "api.json" ? "deflate" : item.path == "/api/news" ? "zstd" : "br"
                    if compressed || cassette == "api.json" {
                        #expect(answer.coding == (compressed ? recorded : nil), "\(item.path)")
                    }
                }
            }
            server.send(SIGINT)
            #expect(try await server.waitForExit() == 0)
        }
    }
}
