import Foundation
import Kakapo
import KakapoTestSupport
import Testing

/// Recording onto a disk that fills up or is read-only, for real (a small tmpfs).
@Suite("Disk faults", .enabled(if: TmpfsMount.available, "needs root and mount"))
struct DiskFaultTests {
    @Test("a read-only folder is refused at start, naming the file")
    func readOnlyAtStart() throws {
        let disk = try TmpfsMount(kilobytes: 64)
        defer { disk.unmount() }
        try disk.makeReadOnly()
        do {
            _ = try ProxyServer(
                configuration: ProxyConfiguration(
                    mode: .new, cassettePath: disk.path + "/c.json",
                    upstream: UpstreamConfiguration(baseURL: "http://127.0.0.1:1")))
            Issue.record("a read-only folder was accepted")
        } catch let error as CassetteError {
            #expect(error.code == .notWritable)
            #expect(error.description.contains("c.json"))
        }
    }

    @Test("a disk that fills up while recording: answers go on, the file on disk stays the last complete save")
    func diskFull() async throws {
        let disk = try TmpfsMount(kilobytes: 64)
        defer { disk.unmount() }
        let cassette = disk.path + "/c.json"
        let upstream = try await TestUpstream.start { request in
            .response(
                HTTP.Response(status: 200, contentType: "text/plain", text: String(repeating: "z", count: 20_000)))
        }
        let proxy = try await ProxyHarness.recording(upstream, cassette: cassette)
        for index in 0..<6 {
            let answer = try await proxy.client.send(.get, "/big/\(index)")
            #expect(answer.status == 200 && answer.body.count == 20_000, "answers go on while saves fail")
            // Longer than the saver's window (0.2 s): the first save holds one answer, which fits with its
            // journal; two (150 ms apart, the machine otherwise idle) did not, and nothing was ever saved.
            try await Task.sleep(for: .milliseconds(300))
        }
        let summary = await proxy.stop()
        await upstream.stop()
        #expect(summary.saveError != nil, "the final save cannot fit, and the summary says so")
        let saved = try CassetteFile.load(cassette)
        #expect(!saved.interactions.isEmpty && saved.interactions.count < 6)
        #expect(saved.interactions.map(\.request.target) == (0..<saved.interactions.count).map { "/big/\($0)" })
        let files = try FileManager.default.contentsOfDirectory(atPath: disk.path)
        #expect(files.filter { $0.hasSuffix(".tmp") }.isEmpty, "no temporary file left: \(files)")
        #expect(files.contains("c.json.journal"), "what could not be saved stays in the journal: \(files)")
    }
}
