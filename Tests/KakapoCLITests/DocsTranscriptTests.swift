import Foundation
import KakapoTestSupport
import Testing

/// Every transcript of the README, the guides and the pytest example is run by `tools/docs-transcripts.py` against the built
/// binary, so what they show cannot drift from what Kakapo prints.
@Suite("Docs transcripts")
struct DocsTranscriptTests {
    /// README.md, every guide under docs/, and the pytest example's README.
    static let files: [String] = {
        let guides = (try? FileManager.default.contentsOfDirectory(atPath: CLITests.packageRoot + "/docs")) ?? []
        return ["README.md"] + guides.filter { $0.hasSuffix(".md") }.sorted().map { "docs/" + $0 } + [
            "Examples/pytest/README.md"
        ]
    }()

    static let python = CLITests.packageRoot + "/.build/python-venv/bin/python"
    static let runner = CLITests.packageRoot + "/tools/docs-transcripts.py"

    // One file at a time: each starts servers and peers of its own, and the rest of the suite runs beside it.
    @Test("the transcripts of each file run as shown", .serialized, arguments: files)
    func transcriptsRun(file: String) async throws {
        let run = try await KakapoProcess.run(
            [Self.runner, "--kakapo", KakapoProcess.binary, file], directory: CLITests.packageRoot,
            executable: Self.python, timeout: .seconds(1200))
        #expect(run.status == 0, "\(file) has drifted:\n\(run.error)\(run.output)")
    }

    @Test("every transcript is run, or names the test that runs it, or says why it cannot run here")
    func everyTranscriptCovered() async throws {
        #expect(Self.files.contains("docs/cassettes.md") && Self.files.count > 20)
        let listed = try await KakapoProcess.run(
            [Self.runner, "--list"] + Self.files, directory: CLITests.packageRoot, executable: Self.python)
        try #require(listed.status == 0, "\(listed.error)")
        var run = 0
        var notRun: [String] = []
        for line in listed.output.split(separator: "\n") {
            let fields = line.split(separator: "\t", maxSplits: 2).map(String.init)
            try #require(fields.count == 3, "\(line)")
            let (place, how) = (fields[0], fields[2])
            if how == "run" {
                run += 1
            } else if how.hasPrefix("checked by: ") {
                let test = String(how.dropFirst("checked by: ".count))
                let document = String(place.prefix { $0 != ":" })
                let source = try? String(contentsOfFile: CLITests.packageRoot + "/" + test, encoding: .utf8)
                #expect(test.hasPrefix("Tests/") && source != nil, "\(place): no test file \(test)")
                #expect(
                    source?.contains(URL(fileURLWithPath: document).lastPathComponent) == true,
                    "\(place): \(test) does not read \(document)")
            } else if how.hasPrefix("not run: ") {
                let reason = how.dropFirst("not run: ".count)
                #expect(reason.count >= 12, "\(place): a transcript that is not run says why: \(how)")
                notRun.append(place + " " + reason)
            } else {
                Issue.record("\(place): \(how)")
            }
        }
        #expect(run >= 50, "\(listed.output)")
        // Only what a docs run cannot do stays out: the iOS simulator and Android emulator recipes (4), a
        // Firefox profile, a 20 s benchmark, and this package's own `swift test`.
        #expect(notRun.count <= 7, "\(notRun)")
    }
}
