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
}
