import Foundation
import Kakapo
import KakapoTestSupport
import Testing

@Suite("Chunked answers recorded as timed chunks")
struct StreamRecordingTests {
    static let lines = (0..<3).map { Array("{\"n\":\($0)}\n".utf8) }
    static let steps = (0..<3).map { Array("step \($0) done;".utf8) }

    /// `/ndjson`: three JSON lines 300 ms apart; `/progress`: three plain-text pieces 300 ms apart, with
    /// no line ends; `/burst`: a chunked answer sent at once; `/download`: 2 MiB of unknown length, fast.
    static func upstream() async throws -> TestUpstream {
        try await TestUpstream.start { request in
            switch request.path {
            case "/ndjson":
                .paced(headers: ["Content-Type": "application/x-ndjson"], chunks: lines, gap: 0.3)
            case "/progress":
                .paced(headers: ["Content-Type": "text/plain"], chunks: steps, gap: 0.3)
            case "/burst":
                .chunked(
                    status: 200, headers: ["Content-Type": "application/json"],
                    chunks: [
                        Array("{\"a\":".utf8), Array("1}".utf8),
                    ])
            default:
                .generated(size: 2 << 20, announcesLength: false)
            }
        }
    }

    @Test(
        "NDJSON is stored one line per chunk, a paced chunked answer as its pieces, with offsets; a burst and a fast download stay whole; replay keeps the gaps or drops them"
    )
    func recordsTimedChunks() async throws {
        let cassette = try Fixtures.temporaryDirectory() + "/streams.json"
        let upstream = try await Self.upstream()
        let recorder = try await ProxyHarness.recording(upstream, cassette: cassette)
        for path in ["/ndjson", "/progress", "/burst", "/download"] {
            let answer = try await recorder.client.send(.get, path)
            #expect(answer.status == 200, "\(path)")
        }
        await recorder.stop()
        await upstream.stop()

        let recorded = try CassetteFile.load(cassette).interactions
        #expect(recorded.map(\.request.target) == ["/ndjson", "/progress", "/burst", "/download"])
        let ndjson = try #require(recorded[0].chunks)
        #expect(ndjson.map(\.bytes) == Self.lines)
        let progress = try #require(recorded[1].chunks)
        #expect(progress.map(\.bytes) == Self.steps)
        for chunks in [ndjson, progress] {
            #expect(chunks.first?.offsetMilliseconds == 0)
            for (index, chunk) in chunks.enumerated().dropFirst() {
                #expect(abs(chunk.offsetMilliseconds - Double(300 * index)) < 150, "chunk \(index): \(chunk)")
            }
        }
        #expect(recorded[2].chunks == nil)
        #expect(recorded[2].response.body == Array("{\"a\":1}".utf8))
        #expect(recorded[3].chunks == nil)
        #expect(recorded[3].response.body.count == 2 << 20)

        // The file says it in text, one entry per line.
        let text = try String(contentsOfFile: cassette, encoding: .utf8)
        #expect(
            text.contains(#""text": "{\"n\":1}\n""#) || text.contains(#""text":"{\"n\":1}\n""#), "\(text.prefix(2000))")

        let timed = try await ProxyHarness.replaying(cassette)
        let started = ContinuousClock.now
        let replayed = try await timed.client.send(.get, "/progress")
        #expect(replayed.body == Self.steps.flatMap { $0 })
        #expect(ContinuousClock.now - started > .milliseconds(450))
        await timed.stop()

        // The NDJSON lines' gaps stretched to a minute each, so that "played without its gaps" is told apart
        // from "played with them" by a bound no loaded machine comes near.
        var stretched = try CassetteFile.load(cassette)
        let gaps = try #require(stretched.interactions[0].chunks)
        stretched.interactions[0].chunks = gaps.enumerated().map { index, chunk in
            ResponseChunk(offsetMilliseconds: Double(60_000 * index), bytes: chunk.bytes)
        }
        try CassetteFile.save(stretched, to: cassette)
        var configuration = ProxyConfiguration(mode: .replay, cassettePath: cassette)
        configuration.streamTiming = .none
        let immediate = try await ProxyHarness.start(configuration)
        let begun = ContinuousClock.now
        let lines = try await immediate.client.send(.get, "/ndjson")
        #expect(lines.body == Self.lines.flatMap { $0 })
        #expect(ContinuousClock.now - begun < .seconds(60), "played with its recorded gaps")
        #expect(try await immediate.client.send(.get, "/burst").body == Array("{\"a\":1}".utf8))
        await immediate.stop()
    }
}
