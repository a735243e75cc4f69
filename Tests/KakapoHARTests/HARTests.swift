import Foundation
import Kakapo
import KakapoTestSupport
import Testing

/// HAR in and out: files in the shapes Chrome's devtools and Polly.js write, a round trip that replays the
/// same answers, and malformed files.
@Suite("HAR import and export")
struct HARTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")
        .path

    static func load(_ name: String) throws -> Cassette {
        let path = fixtures + "/" + name
        return try HARImport.cassette(from: Array(try Data(contentsOf: URL(fileURLWithPath: path))), file: path)
    }

    @Test(
        "a Chrome devtools HAR: order, HTTP/2 pseudo-headers dropped, gzip kept on the wire, base64 bodies, extensions ignored"
    )
    func chrome() throws {
        let cassette = try Self.load("chrome.har")
        #expect(
            cassette.interactions.map { "\($0.request.method) \($0.request.target)" } == [
                "GET /v1/users?page=2&q=ada%20l", "GET /logo.png", "POST /login",
            ])
        let users = cassette.interactions[0]
        #expect(users.request.headers["Host"] == "api.example.com")
        #expect(!users.request.headers.contains { $0.name.hasPrefix(":") })
        #expect(users.response.headers["content-encoding"] == "gzip")
        let decoded = try #require(ContentCoding.gzip.decode(users.response.body))
        #expect(String(decoding: decoded, as: UTF8.self).hasPrefix(#"[{"id":"1","name":"Ada Lovelace"}"#))
        #expect(users.recordedAt == "2026-11-20T10:00:00.100Z")
        #expect(users.durationMilliseconds == 83.2)
        #expect(cassette.interactions[1].response.body == [137, 80, 78, 71, 13, 10, 26, 10])
        let login = cassette.interactions[2]
        #expect(String(decoding: login.request.body, as: UTF8.self) == "user=ada&password=hunter22")
        #expect(login.response.status == 302)
        #expect(login.response.headers["Location"] == "/home")
    }

    @Test("a Polly.js HAR")
    func polly() throws {
        let cassette = try Self.load("polly.har")
        let entry = try #require(cassette.interactions.first)
        #expect(entry.request.method == .post)
        #expect(entry.request.target == "/api/users")
        #expect(entry.request.headers["host"] == "localhost:3000")
        #expect(entry.response.status == 201)
        #expect(String(decoding: entry.response.body, as: UTF8.self) == #"{"id":7,"name":"ada"}"#)
    }

    @Test("a cassette exported and imported again replays the same answers")
    func roundTrip() async throws {
        let directory = try Fixtures.temporaryDirectory()
        var original = try Self.load("chrome.har")
        original.interactions += try Self.load("polly.har").interactions
        try CassetteFile.save(original, to: directory + "/original.json")
        let exported = HARExport.bytes(original, scheme: "https")
        let again = try HARImport.cassette(from: exported, file: "exported.har")
        try CassetteFile.save(again, to: directory + "/again.json")
        #expect(again.interactions.count == original.interactions.count)

        func answers(_ cassette: String) async throws -> [HTTP.Response] {
            let server = try ProxyServer(
                configuration: ProxyConfiguration(port: 0, mode: .replay, cassettePath: cassette))
            let client = try TestClient(port: try await server.start())
            var results: [HTTP.Response] = []
            for interaction in original.interactions {
                var headers = HTTP.Headers()
                headers.add(name: "Content-Type", value: interaction.request.headers["Content-Type"] ?? "")
                results.append(
                    try await client.send(
                        interaction.request.method, interaction.request.target, headers: headers,
                        body: interaction.request.body))
            }
            client.shutdown()
            let summary = await server.shutdown()
            #expect(summary.misses.isEmpty, "\(summary.misses)")
            return results
        }
        let first = try await answers(directory + "/original.json")
        let second = try await answers(directory + "/again.json")
        for (a, b) in zip(first, second) {
            #expect(a.status == b.status)
            #expect(
                a.headers.filter { $0.name.lowercased() != "content-length" }
                    == b.headers.filter { $0.name.lowercased() != "content-length" })
            #expect(
                ContentCoding.decoding(a.body, headers: a.headers).content
                    == ContentCoding.decoding(b.body, headers: b.headers).content)
        }
    }

    @Test(
        "an unreadable HAR names the entry and field, with line and column",
        arguments: [
            ("{\"log\": ", "bad.har:1:9:"),
            (#"{"nolog": {}}"#, "bad.har:1:1: log: missing"),
            (#"{"log": {"entries": {}}}"#, "bad.har:1:21: log.entries: expected an array, found an object"),
            (#"{"log": {"entries": [{"response": {"status": 200}}]}}"#, "log.entries[0].request: missing"),
            (
                #"{"log": {"entries": [{"request": {"method": "GET", "url": "http://a/x"}, "response": {"status": "200"}}]}}"#,
                "log.entries[0].response.status: expected a whole number, found a string"
            ),
            (
                #"{"log": {"entries": [{"request": {"method": "GET", "url": "/relative"}, "response": {"status": 200}}]}}"#,
                "log.entries[0].request.url: expected an absolute http(s) URL"
            ),
            (
                #"{"log": {"entries": [{"request": {"method": "GET", "url": "http://a/"}, "response": {"status": 200, "content": {"text": "@@", "encoding": "base64"}}}]}}"#,
                "log.entries[0].response.content.text: not valid base64"
            ),
            (
                #"{"log": {"entries": [{"request": {"method": "GET", "url": "http://a/", "headers": [{"name": 1}]}, "response": {"status": 200}}]}}"#,
                "log.entries[0].request.headers[0].name: expected a string"
            ),
        ])
    func malformed(text: String, expected: String) {
        do {
            _ = try HARImport.cassette(from: Array(text.utf8), file: "bad.har")
            Issue.record("a malformed HAR was read")
        } catch {
            #expect(error.description.contains(expected), "\(error)")
            #expect(error.description.hasPrefix("bad.har:"), "\(error)")
        }
    }
}
