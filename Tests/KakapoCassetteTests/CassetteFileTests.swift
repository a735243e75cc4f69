import Foundation
import KakapoCassette
import KakapoHTTP
import KakapoJSON
import Testing

@Suite("Cassette files")
struct CassetteFileTests {
    static func sample() -> Cassette {
        Cassette(interactions: [
            Interaction(
                request: HTTP.Request(
                    method: .post, target: "/users?x=1",
                    headers: HTTP.Headers([("Host", "api.test"), ("Content-Type", "application/json")]),
                    body: Array(#"{"name":"Ada"}"#.utf8)),
                response: HTTP.Response(
                    status: 201,
                    headers: HTTP.Headers([("Content-Type", "application/json"), ("X-Id", "1"), ("X-Id", "2")]),
                    body: Array("{\"id\":\"1\"}\n".utf8)),
                recordedAt: "2026-11-22T06:30:00.000Z", durationMilliseconds: 12.5),
            Interaction(
                request: HTTP.Request(method: .get, target: "/logo.png", headers: ["Host": "api.test"]),
                response: HTTP.Response(
                    status: 200, headers: ["Content-Type": "image/png"], body: [0x89, 0x50, 0x4E, 0x47, 0, 1, 2]),
                recordedAt: "2026-11-22T06:30:01.000Z", durationMilliseconds: 3),
            Interaction(
                request: HTTP.Request(method: .delete, target: "/users/1"),
                response: HTTP.Response(status: 204),
                recordedAt: "2026-11-22T06:30:02.000Z", durationMilliseconds: 1),
        ])
    }

    @Test("a saved cassette loads back equal, and saving it again gives identical bytes")
    func roundTrip() throws {
        let path = try temporaryPath()
        try CassetteFile.save(Self.sample(), to: path)
        let first = try Data(contentsOf: URL(fileURLWithPath: path))
        let loaded = try CassetteFile.load(path)
        #expect(loaded == Self.sample())
        try CassetteFile.save(loaded, to: path)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == first)
        #expect(first.last == UInt8(ascii: "\n"))
    }

    @Test("the file built from per-interaction chunks equals the whole document written at once")
    func chunksMatchWholeDocument() {
        for cassette in [Self.sample(), Cassette()] {
            var whole = JSONWriter(layout: .readable).write(CassetteCodec.encode(cassette))
            whole.append(UInt8(ascii: "\n"))
            #expect(CassetteCodec.encodeFile(cassette) == whole)
        }
    }

    @Test(
        "a recording folded in several steps (copying what is saved, keeping none of it) writes the same bytes as one save; a replacement rewrites the rest"
    )
    func incrementalFolds() async throws {
        let sample = Self.sample()
        for (loaded, replacing) in [(0, false), (2, false), (2, true)] {
            let path = try temporaryPath()
            let original = Cassette(interactions: Array(sample.interactions.prefix(loaded)))
            try CassetteFile.save(original, to: path)
            let session = CassetteSession(path: path, cassette: original, redactor: .disabled)
            try session.startAutosave(interval: 0.05)
            var expected = original
            for (step, interaction) in sample.interactions.enumerated() {
                let replaces = replacing && step < loaded
                session.record(interaction, replacing: replaces)
                if replaces {
                    expected.interactions[step] = interaction
                } else {
                    expected.interactions.append(interaction)
                }
                // Wait for the fold, so the next recording lands in another one.
                let deadline = ContinuousClock.now + .seconds(5)
                while (try? CassetteFile.load(path))?.interactions.count != expected.interactions.count
                    || FileManager.default.fileExists(atPath: path + ".journal")
                        && (try? Data(contentsOf: URL(fileURLWithPath: path + ".journal")))?.isEmpty == false,
                    ContinuousClock.now < deadline
                {
                    try await Task.sleep(for: .milliseconds(20))
                }
                if replaces {
                    #expect(session.snapshot.interactions[step] == interaction)
                }
            }
            try session.close()
            #expect(!FileManager.default.fileExists(atPath: path + ".journal"))
            let written = try Data(contentsOf: URL(fileURLWithPath: path))
            #expect(Array(written) == CassetteCodec.encodeFile(expected), "\(loaded) loaded, replacing: \(replacing)")
            #expect(session.snapshot.interactions.count == loaded, "recordings are not kept in memory")
            #expect(session.interactionCount == expected.interactions.count)
        }
    }

    @Test("JSON bodies are stored as JSON, binary ones as base64, empty ones not at all")
    func bodyForms() throws {
        let text = String(decoding: CassetteCodec.encodeFile(Self.sample()), as: UTF8.self)
        #expect(text.contains(#""json": {"# + "\n" + #"            "name": "Ada""#), "\(text)")
        #expect(text.contains(#""newline": true"#))
        #expect(text.contains(#""base64": "iVBORwABAg==""#))
        #expect(text.contains(#"["X-Id", "1"]"#) && text.contains(#"["X-Id", "2"]"#))
        let deleteEntry = try #require(text.range(of: "\"/users/1\""))
        #expect(!text[deleteEntry.upperBound...].contains("\"body\""))
    }

    @Test("saving replaces the file atomically and leaves no temporary file behind")
    func atomicSave() throws {
        let directory = try temporaryDirectory()
        let path = directory + "/c.json"
        try CassetteFile.save(Self.sample(), to: path)
        try CassetteFile.save(Cassette(), to: path)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory) == ["c.json"])
        #expect(try CassetteFile.load(path).interactions.isEmpty)
    }

    @Test("an unwritable folder is reported, naming the file")
    func unwritable() throws {
        #expect(throws: CassetteError.self) { try CassetteFile.save(Cassette(), to: "/nonexistent-folder/c.json") }
        #expect(throws: CassetteError.self) { try CassetteFile.checkWritable("/nonexistent-folder/c.json") }
    }

    @Test(
        "a malformed cassette names the file, line and column",
        arguments: [
            ("{\n  \"version\": 1,\n  \"interactions\": [\n    {\"request\": }\n  ]\n}", "4:17", "expected a value"),
            ("{\"version\": 2, \"interactions\": []}", "1:13", "unsupported cassette version 2"),
            ("{\"version\": 1}", "1:1", "missing \"interactions\""),
            ("{\"version\": 1, \"version\": 1, \"interactions\": []}", "1:16", "duplicate key"),
            (
                "{\"version\": 1, \"interactions\": [\n {\"request\": {\"method\": \"GET\", \"url\": \"/\"},\n  \"response\": {\"status\": \"200\"}}]}",
                "3:26", "\"status\" must be an integer"
            ),
            (
                "{\"version\": 1, \"interactions\": [{\"request\": {\"method\": \"GET\", \"url\": \"/\"},\n \"response\": {\"status\": 200, \"body\": {\"base64\": \"***\"}}}]}",
                "2:49", "not valid base64"
            ),
            (
                "{\"version\": 1, \"interactions\": [{\"request\": {\"method\": \"GET\", \"url\": \"/\", \"headers\": [[\"A\"]]},\n \"response\": {\"status\": 200}}]}",
                "1:87", "[name, value] pair"
            ),
        ])
    func malformed(text: String, location: String, message: String) throws {
        do {
            _ = try CassetteFile.decode(Array(text.utf8), file: "cassettes/bad.json")
            Issue.record("decoded: \(text)")
        } catch {
            #expect(error.description.hasPrefix("cassettes/bad.json:\(location): "), "\(error)")
            #expect(error.message.contains(message), "\(error)")
        }
    }

    @Test("a missing file is unreadable, naming it")
    func missingFile() {
        do {
            _ = try CassetteFile.load("/nonexistent/c.json")
            Issue.record("loaded")
        } catch {
            #expect(error.code == .unreadable)
            #expect(error.description == "/nonexistent/c.json: no such file")
        }
    }
}

func temporaryDirectory() throws -> String {
    let path = NSTemporaryDirectory() + "kakapo-cassette-tests-" + UUID().uuidString
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}

func temporaryPath() throws -> String { try temporaryDirectory() + "/cassette.json" }
