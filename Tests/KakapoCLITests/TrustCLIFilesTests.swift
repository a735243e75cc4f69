import Foundation
import Kakapo
import KakapoTestSupport
import Testing

/// Issue 25, "no answered interaction is lost, no cassette is made unloadable", through the built binary
/// against a real local upstream.
@Suite("Trust: cassette files through the binary")
struct TrustCLIFilesTests {
    /// An upstream that answers JSON naming the path, with a short `X-Trace` header.
    static func upstream(bodyBytes: Int = 0) async throws -> TestUpstream {
        try await TestUpstream.start { request in
            var response = HTTP.Response(
                status: 200, contentType: "application/json",
                text: #"{"path":"\#(request.path)","pad":"\#(String(repeating: "p", count: bodyBytes))"}"#)
            response.headers.add(name: "X-Trace", value: "v")
            return .response(response)
        }
    }

    static func record(_ upstream: TestUpstream, cassette: String) throws -> KakapoProcess {
        try KakapoProcess(["record", "--upstream", upstream.baseURL, "--cassette", cassette, "--port", "0"])
    }

    static func waitForFile(_ cassette: String, count: Int) async throws {
        let deadline = ContinuousClock.now + .seconds(15)
        while (try? CassetteFile.load(cassette))?.interactions.count != count, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    static func mode(_ path: String) throws -> Int {
        ((try FileManager.default.attributesOfItem(atPath: path))[.posixPermissions] as? Int ?? -1) & 0o777
    }

    @Test(
        "kakapo cassette redact on a cassette being recorded is refused, naming the recorder; the recording keeps its journal and loses nothing"
    )
    func writerRefusedWhileRecording() async throws {
        let upstream = try await Self.upstream()
        let cassette = try Fixtures.temporaryDirectory() + "/busy.json"
        let process = try Self.record(upstream, cassette: cassette)
        let client = try TestClient(port: try await process.waitUntilListening())
        for index in 0..<5 { #expect(try await client.send(.get, "/first/\(index)").status == 200) }
        try await Self.waitForFile(cassette, count: 5)
        // Redacting X-Trace's short value makes the file grow: a recording copying from where it put
        // its parts would then write a broken cassette.
        let redact = try await KakapoProcess.run(["cassette", "redact", cassette, "--redact-header", "X-Trace"])
        #expect(redact.status != 0, "the write was refused: \(redact.output)")
        #expect(redact.error.contains("another kakapo is recording into this cassette"), "\(redact.error)")
        #expect(redact.error.contains("kakapo record"), "the message names the recording process: \(redact.error)")
        #expect(FileManager.default.fileExists(atPath: cassette + ".journal"), "the live journal is not touched")
        for index in 0..<15 { #expect(try await client.send(.get, "/second/\(index)").status == 200) }
        try await Self.waitForFile(cassette, count: 20)
        client.shutdown()
        process.send(SIGINT)
        #expect(try await process.waitForExit() == 0, "\(process.standardError)")
        await upstream.stop()
        let targets = try CassetteFile.load(cassette).interactions.map(\.request.target)
        #expect(targets == (0..<5).map { "/first/\($0)" } + (0..<15).map { "/second/\($0)" })
        // Once the recording has ended, the same command goes through.
        let after = try await KakapoProcess.run(["cassette", "redact", cassette, "--redact-header", "X-Trace"])
        #expect(after.status == 0, "\(after.error)")
        #expect(!FileManager.default.fileExists(atPath: cassette + ".lock"))
    }

    @Test("kakapo record refuses a cassette named like another's lock or journal, naming the rule, and makes no file")
    func reservedCassetteNames() async throws {
        let directory = try Fixtures.temporaryDirectory()
        for name in ["api.json.lock", "api.json.journal"] {
            let refused = try await KakapoProcess.run([
                "record", "--upstream", "http://127.0.0.1:9", "--cassette", directory + "/" + name, "--port", "0",
            ])
            #expect(refused.status != 0, "\(name)")
            #expect(refused.error.contains("a cassette's name may not end in"), "\(name): \(refused.error)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory).isEmpty)
    }

    @Test("recording keeps a 0600 cassette 0600, and its journal is 0600 from the start")
    func modeKept() async throws {
        let upstream = try await Self.upstream()
        let cassette = try Fixtures.temporaryDirectory() + "/private.json"
        try CassetteFile.save(Cassette(), to: cassette)
        chmod(cassette, 0o600)
        let process = try Self.record(upstream, cassette: cassette)
        let client = try TestClient(port: try await process.waitUntilListening())
        #expect(try await client.send(.get, "/a").status == 200)
        #expect(try Self.mode(cassette + ".journal") == 0o600)
        try await Self.waitForFile(cassette, count: 1)
        #expect(try Self.mode(cassette) == 0o600)
        #expect(try await client.send(.get, "/b").status == 200)
        client.shutdown()
        process.send(SIGINT)
        #expect(try await process.waitForExit() == 0)
        await upstream.stop()
        #expect(try Self.mode(cassette) == 0o600)
        #expect(try CassetteFile.load(cassette).interactions.count == 2)
    }

    @Test("recording into a symbolically linked cassette writes its target and keeps the link")
    func symbolicLinkKept() async throws {
        let upstream = try await Self.upstream()
        let shared = try Fixtures.temporaryDirectory() + "/shared.json"
        try CassetteFile.save(Cassette(), to: shared)
        let link = try Fixtures.temporaryDirectory() + "/linked.json"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: shared)
        let process = try Self.record(upstream, cassette: link)
        let client = try TestClient(port: try await process.waitUntilListening())
        #expect(try await client.send(.get, "/through").status == 200)
        client.shutdown()
        process.send(SIGINT)
        #expect(try await process.waitForExit() == 0, "\(process.standardError)")
        await upstream.stop()
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link) == shared, "the link stays a link")
        #expect(try CassetteFile.load(shared).interactions.map(\.request.target) == ["/through"])
    }

    @Test(
        "a disk that fills up through shutdown: the run exits non-zero, says how many interactions are not in the file and where they are, and every answered one is there",
        .enabled(if: TmpfsMount.available, "needs root and mount")
    )
    func diskFullThroughShutdown() async throws {
        let disk = try TmpfsMount(kilobytes: 128)
        defer { disk.unmount() }
        let cassette = disk.path + "/c.json"
        let upstream = try await Self.upstream(bodyBytes: 3_000)
        let process = try Self.record(upstream, cassette: cassette)
        let client = try TestClient(port: try await process.waitUntilListening())
        var answered: [String] = []
        for index in 0..<80 {
            if let response = try? await client.send(.get, "/full/\(index)"), response.status == 200 {
                answered.append("/full/\(index)")
            }
            try await Task.sleep(for: .milliseconds(5))
        }
        client.shutdown()
        process.send(SIGINT)
        let status = try await process.waitForExit()
        await upstream.stop()
        let errors = process.standardError
        #expect(answered.count == 80, "answers go on while saves fail")
        #expect(status != 0, "a run that could not save everything does not exit 0: \(errors)")
        #expect(errors.contains("not in the file"), "\(errors)")
        #expect(!errors.contains("recorded 80 interactions to"), "the summary does not claim a full save: \(errors)")

        // Following the summary's directions: the file, the journal and (when the journal had no room)
        // the rescue file beside it in the temporary folder hold every answered interaction.
        let copy = try Fixtures.temporaryDirectory() + "/c.json"
        if FileManager.default.fileExists(atPath: cassette) {
            try FileManager.default.copyItem(atPath: cassette, toPath: copy)
        }
        var journal = (try? Data(contentsOf: URL(fileURLWithPath: cassette + ".journal"))) ?? Data()
        let rescue = errors.split(separator: " ").first { $0.contains("kakapo-unsaved-") }.map(String.init)
        if let rescue {
            journal += try Data(contentsOf: URL(fileURLWithPath: rescue))
            try? FileManager.default.removeItem(atPath: rescue)
        }
        try journal.write(to: URL(fileURLWithPath: copy + ".journal"))
        _ = try CassetteSession.recover(copy)
        let saved = Set(try CassetteFile.load(copy).interactions.map(\.request.target))
        let lost = answered.filter { !saved.contains($0) }
        #expect(lost.isEmpty, "\(lost.count) answered interactions are nowhere: \(lost.prefix(5)); \(errors)")
        print(errors)
    }
}
