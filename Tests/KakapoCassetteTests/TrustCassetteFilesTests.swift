import Foundation
import KakapoHTTP
import KakapoTestSupport
import Testing

@testable import KakapoCassette

/// Issue 25, "no answered interaction is lost, no cassette is made unloadable": the cassette's lock, the
/// file changing under a recording, modes, links, and the writer-reader property.
@Suite("Trust: cassette files")
struct TrustCassetteFilesTests {
    static func interaction(_ target: String) -> Interaction {
        Interaction(
            request: HTTP.Request(method: .get, target: target),
            response: HTTP.Response(status: 200, body: Array("ok".utf8)),
            recordedAt: "2026-11-23T00:00:00.000Z", durationMilliseconds: 1)
    }

    /// Waits until the file holds `count` interactions (a fold wrote them).
    static func waitForFold(_ path: String, count: Int) async throws {
        let deadline = ContinuousClock.now + .seconds(10)
        while (try? CassetteFile.load(path))?.interactions.count != count, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(try CassetteFile.load(path).interactions.count == count)
    }

    @Test("a save while a recording holds the cassette is refused, naming the recorder, and the file stays whole")
    func saveRefusedWhileRecording() async throws {
        let path = try temporaryPath()
        let session = CassetteSession(path: path, cassette: try CassetteFile.loadIfPresent(path), redactor: .disabled)
        try session.startAutosave(interval: 0.05)
        session.record(Self.interaction("/a"), replacing: false)
        try await Self.waitForFold(path, count: 1)
        do {
            try CassetteFile.save(Cassette(), to: path)
            Issue.record("a save went through while a recording held the cassette")
        } catch {
            #expect(error.code == .locked)
            #expect(error.description.contains("recording into this cassette: this process"), "\(error)")
        }
        session.record(Self.interaction("/b"), replacing: false)
        try session.close()
        #expect(try CassetteFile.load(path).interactions.map(\.request.target) == ["/a", "/b"])
        #expect(!FileManager.default.fileExists(atPath: path + ".lock"), "the lock file goes at close")
        // Once the recording ended, a save goes through.
        try CassetteFile.save(Cassette(), to: path)
    }

    @Test("a command that read the cassette before a recording saved it cannot write over that recording")
    func staleSaveRefused() throws {
        let path = try temporaryPath()
        try CassetteFile.save(Cassette(interactions: [Self.interaction("/old")]), to: path)
        // `kakapo cassette redact` or `verify --update` reads the file, and works on it for a while ...
        var edited = try CassetteFile.load(path)
        // ... while a recording starts, records and ends.
        let recording = CassetteSession(path: path, cassette: try CassetteFile.load(path), redactor: .disabled)
        try recording.startAutosave(interval: 0.05)
        recording.record(Self.interaction("/recorded"), replacing: false)
        try recording.close()
        edited.interactions.append(Self.interaction("/edited"))
        #expect(throws: CassetteError.self) { try CassetteFile.save(edited, to: path) }
        #expect(try CassetteFile.load(path).interactions.map(\.request.target) == ["/old", "/recorded"])
        // Read again, the change goes through.
        edited = try CassetteFile.load(path)
        edited.interactions.append(Self.interaction("/edited"))
        try CassetteFile.save(edited, to: path)
        #expect(try CassetteFile.load(path).interactions.count == 3)
    }

    @Test(
        "a recording that read the file before another recording's final save is refused when it starts, so it cannot write over that save"
    )
    func staleLoadRefused() async throws {
        let path = try temporaryPath()
        let first = CassetteSession(path: path, cassette: try CassetteFile.loadIfPresent(path), redactor: .disabled)
        try first.startAutosave(interval: 0.05)
        for index in 0..<3 { first.record(Self.interaction("/early/\(index)"), replacing: false) }
        try await Self.waitForFold(path, count: 3)
        // The second starts while the first is ending: it reads the file before the first's last answers
        // are saved, and takes the lock after the first let it go.
        let stale = try CassetteFile.loadIfPresent(path)
        for index in 0..<5 { first.record(Self.interaction("/last/\(index)"), replacing: false) }
        try first.close()
        let second = CassetteSession(path: path, cassette: stale, redactor: .disabled)
        do {
            try second.startAutosave(interval: 0.05)
            second.record(Self.interaction("/second"), replacing: false)
            try second.close()
            Issue.record("the second recording started on a stale read")
        } catch {
            #expect(error.code == .locked)
            #expect(error.description.contains("start again"), "\(error)")
        }
        #expect(try CassetteFile.load(path).interactions.count == 8, "the first one's last five answers are kept")
        // Started again, it reads what the first saved.
        let again = CassetteSession(path: path, cassette: try CassetteFile.loadIfPresent(path), redactor: .disabled)
        try again.startAutosave(interval: 0.05)
        again.record(Self.interaction("/second"), replacing: false)
        try again.close()
        #expect(try CassetteFile.load(path).interactions.count == 9)
    }

    @Test(
        "a cassette another program rewrites while recording is never copied from blindly: the file stays loadable and the journal keeps the recordings"
    )
    func fileChangedUnderTheRecording() async throws {
        let path = try temporaryPath()
        let session = CassetteSession(path: path, cassette: try CassetteFile.loadIfPresent(path), redactor: .disabled)
        try session.startAutosave(interval: 0.05)
        session.record(Self.interaction("/a"), replacing: false)
        try await Self.waitForFold(path, count: 1)
        // Another program (an editor, a checkout) writes a larger cassette in its place, bypassing the lock.
        let edited = Cassette(interactions: (0..<30).map { Self.interaction("/edited/\($0)") })
        try Data(CassetteCodec.encodeFile(edited)).write(to: URL(fileURLWithPath: path))
        session.record(Self.interaction("/b"), replacing: false)
        #expect(throws: CassetteError.self) { try session.close() }
        #expect(try CassetteFile.load(path) == edited, "the other program's file is neither broken nor overwritten")
        #expect(FileManager.default.fileExists(atPath: CassetteJournal.path(for: path)))
        // The next start (any cassette command) folds the recordings into the new file.
        let recovery = try #require(try CassetteSession.recover(path))
        #expect(recovery.folded == 1, "the recording the file could not take")
        let targets = try CassetteFile.load(path).interactions.map(\.request.target)
        #expect(targets.contains("/b") && targets.filter { $0.hasPrefix("/edited/") }.count == 30)
    }

    @Test(
        "a save keeps the cassette's mode; the journal (which holds the lock) and temporary copies are created with it"
    )
    func modesKept() async throws {
        let path = try temporaryPath()
        try CassetteFile.save(Cassette(), to: path)
        chmod(path, 0o600)
        try CassetteFile.save(Cassette(interactions: [Self.interaction("/x")]), to: path)
        #expect(try Self.mode(path) == 0o600)
        let session = CassetteSession(path: path, cassette: try CassetteFile.load(path), redactor: .disabled)
        try session.startAutosave(interval: 0.05)
        #expect(try Self.mode(CassetteJournal.path(for: path)) == 0o600)
        #expect(!FileManager.default.fileExists(atPath: path + ".lock"), "the lock is taken on the journal")
        session.record(Self.interaction("/y"), replacing: false)
        try await Self.waitForFold(path, count: 2)
        #expect(try Self.mode(path) == 0o600)
        try session.close()
        #expect(try Self.mode(path) == 0o600)
        // A group-writable cassette stays so, whatever the umask.
        chmod(path, 0o664)
        try CassetteFile.save(Cassette(), to: path)
        #expect(try Self.mode(path) == 0o664)
    }

    @Test("a cassette that is a symbolic link is written through: the link stays, its target gets the recordings")
    func symbolicLinkWrittenThrough() async throws {
        let shared = try temporaryDirectory()
        let target = shared + "/shared.json"
        try CassetteFile.save(Cassette(interactions: [Self.interaction("/old")]), to: target)
        let link = try temporaryDirectory() + "/linked.json"
        try FileManager.default.createSymbolicLink(
            atPath: link, withDestinationPath: "../" + shared.split(separator: "/").last! + "/shared.json")
        let session = CassetteSession(path: link, cassette: try CassetteFile.load(link), redactor: .disabled)
        try session.startAutosave(interval: 0.05)
        #expect(FileManager.default.fileExists(atPath: target + ".journal"), "the journal sits beside the target")
        session.record(Self.interaction("/new"), replacing: false)
        try session.close()
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link).hasSuffix("/shared.json"))
        #expect(try CassetteFile.load(target).interactions.map(\.request.target) == ["/old", "/new"])
        let folder = try FileManager.default.contentsOfDirectory(
            atPath: URL(fileURLWithPath: link).deletingLastPathComponent().path)
        #expect(folder == ["linked.json"], "nothing is written beside the link: \(folder)")
    }

    static func mode(_ path: String) throws -> Int {
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        return (attributes[.posixPermissions] as? Int ?? -1) & 0o777
    }

    @Test(
        "whatever the writer writes, the reader reads back the same, and what the reader would refuse is never written: 400 random interactions with awkward bytes"
    )
    func writerReaderProperty() throws {
        var random = SeededRandom(seed: 2_026_112_325)
        var failures: [String] = []
        var refused = 0
        let path = try temporaryPath()
        for round in 0..<400 {
            let interaction = Self.randomInteraction(using: &random)
            let cassette = Cassette(interactions: [interaction])
            do {
                try CassetteFile.save(cassette, to: path)
            } catch {
                // The writer said no (naming the interaction): nothing was written.
                #expect(error.code == .invalid && error.description.contains("interaction #0"), "\(error)")
                refused += 1
                continue
            }
            do {
                let decoded = try CassetteFile.load(path)
                let back = try #require(decoded.interactions.first)
                if back.request.body != interaction.request.body || back.response.body != interaction.response.body
                    || back.request.headers != interaction.request.headers
                    || back.response.headers != interaction.response.headers
                    || back.request.url != interaction.request.url || back.request.method != interaction.request.method
                    || back.response.status != interaction.response.status || back.chunks != interaction.chunks
                {
                    failures.append("round \(round): read back differently")
                }
                if CassetteCodec.encodeFile(decoded) != CassetteCodec.encodeFile(cassette) {
                    failures.append("round \(round): a second save differs")
                }
            } catch {
                failures.append("round \(round): written, then refused: \(error)")
            }
        }
        #expect(failures.isEmpty, "\(failures.count) failures, first: \(failures.prefix(3))")
        #expect(refused > 10 && refused < 200, "both kinds are drawn: \(refused) refused")
    }

    /// Awkward strings: control characters (bare CR, LF, NUL), unicode, quotes and backslashes, long runs.
    static func awkwardString(using random: inout SeededRandom) -> String {
        let pieces = [
            "a", "Z", " ", "\r", "\n", "\0", "\t", "\u{1F}", "\"", "\\", "é", "日本", "🦜", "\u{FEFF}", "\u{2028}",
            "%00", "{", "}", "[", "]", ":", ",", "null", "1e400", "-0", "0.1",
        ]
        let count = Int.random(in: 0...12, using: &random)
        var text = (0..<count).map { _ in pieces.randomElement(using: &random)! }.joined()
        if Int.random(in: 0..<20, using: &random) == 0 { text += String(repeating: "x", count: 70_000) }
        return text
    }

    /// Awkward bodies: empty, random bytes (not UTF-8), text with control characters, JSON edge cases.
    static func awkwardBody(using random: inout SeededRandom) -> (body: [UInt8], contentType: String?) {
        let json = [
            "{}", "[]", "null", "0", "-0", "1e400", "123456789012345678901234567890", "0.1e-7", "\"\\u0000\"",
            "{\"a\":1,\"a\":2}", "{ \"z\" : [ 1 , 2 ] , \"a\" : { } }\n", "[1,2,3]\n\n", "\"\\ud800\"",
            "{\"k\":\"\\r\"}",
            "  {\"b\": true}  ",
            "{\"deep\":" + String(repeating: "[", count: 50) + String(repeating: "]", count: 50) + "}",
        ]
        switch Int.random(in: 0..<6, using: &random) {
        case 0: return ([], nil)
        case 1:
            return (
                (0..<Int.random(in: 1...300, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) },
                "application/octet-stream"
            )
        case 2: return (Array(awkwardString(using: &random).utf8), "text/plain; charset=utf-8")
        case 3: return (Array(json.randomElement(using: &random)!.utf8), "application/json")
        case 4: return (Array(json.randomElement(using: &random)!.utf8), nil)
        default: return (Array(awkwardString(using: &random).utf8), "application/x-www-form-urlencoded")
        }
    }

    static func randomHeaders(contentType: String?, using random: inout SeededRandom) -> HTTP.Headers {
        var fields: [HTTP.Headers.Field] = []
        for _ in 0..<Int.random(in: 0...5, using: &random) {
            let name = ["X-Trace", "Accept", "Set-Cookie", "X-Empty", "x-lower", "X-Dup"].randomElement(using: &random)!
            // Mostly what a header can hold; now and then a line break or NUL, which no cassette can.
            var value = awkwardString(using: &random).filter { $0 != "\r" && $0 != "\n" && $0 != "\0" && $0 != "\r\n" }
            if Int.random(in: 0..<25, using: &random) == 0 {
                value += ["\r", "\n", "\0"].randomElement(using: &random)!
            }
            fields.append(HTTP.Headers.Field(name: name, value: value))
        }
        if let contentType { fields.append(HTTP.Headers.Field(name: "Content-Type", value: contentType)) }
        return HTTP.Headers(fields)
    }

    static func randomInteraction(using random: inout SeededRandom) -> Interaction {
        let request = awkwardBody(using: &random)
        let response = awkwardBody(using: &random)
        let target = "/" + awkwardString(using: &random).addingPercentEncoding(withAllowedCharacters: .urlPathAllowed)!
        let chunks: [ResponseChunk]? =
            Int.random(in: 0..<5, using: &random) == 0
            ? (0..<Int.random(in: 1...3, using: &random)).map { index in
                ResponseChunk(offsetMilliseconds: Double(index * 10), bytes: Array("data: \(index)\n\n".utf8))
            } : nil
        var responseBody = response.body
        if let chunks { responseBody = chunks.flatMap(\.bytes) }
        return Interaction(
            request: HTTP.Request(
                method: [.get, .post, "PROPFIND"].randomElement(using: &random)!, target: target,
                headers: randomHeaders(contentType: request.contentType, using: &random), body: request.body),
            response: HTTP.Response(
                status: [200, 201, 204, 301, 404, 500].randomElement(using: &random)!,
                headers: randomHeaders(
                    contentType: chunks == nil ? response.contentType : "text/event-stream", using: &random),
                body: responseBody),
            recordedAt: "2026-11-23T00:00:00.000Z",
            durationMilliseconds: Double(Int.random(in: 0...5000, using: &random)),
            chunks: chunks)
    }
}
