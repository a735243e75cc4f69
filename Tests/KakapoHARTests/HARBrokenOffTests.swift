import Kakapo
import Testing

/// A stream recorded broken off or abandoned keeps its mark through HAR, as `"_brokenOff": true` or
/// `"_abandoned": true` beside `_chunks`.
@Suite("HAR: broken-off streams")
struct HARBrokenOffTests {
    /// A recorded event stream of `chunks`, ended (no mark).
    static func stream(_ chunks: [ResponseChunk], milliseconds: Double) -> Interaction {
        Interaction(
            request: HTTP.Request(method: .get, target: "/events", headers: ["Host": "api.test"]),
            response: HTTP.Response(
                status: 200, headers: ["Content-Type": "text/event-stream"], body: chunks.joinedBytes),
            recordedAt: "2026-11-24T06:00:00.000Z", durationMilliseconds: milliseconds, chunks: chunks)
    }

    @Test("export writes _brokenOff beside _chunks and import reads it back; an ended stream has none")
    func roundTrip() throws {
        let chunks = [
            ResponseChunk(offsetMilliseconds: 0, bytes: Array("data: one\n\n".utf8)),
            ResponseChunk(offsetMilliseconds: 150, bytes: Array("data: two\n\n".utf8)),
        ]
        let ended = Self.stream(chunks, milliseconds: 160)
        var broken = ended
        broken.brokenOff = true
        let har = HARExport.bytes(Cassette(interactions: [broken, ended]))
        #expect(String(decoding: har, as: UTF8.self).components(separatedBy: "\"_brokenOff\": true").count == 2)
        let imported = try HARImport.cassette(from: har, file: "export.har")
        #expect(imported.interactions.map(\.brokenOff) == [true, false])
        #expect(imported.interactions.first?.chunks == chunks)
    }

    @Test("export writes _abandoned beside _chunks and import reads it back, with or without _brokenOff")
    func abandonedRoundTrip() throws {
        let chunks = [ResponseChunk(offsetMilliseconds: 0, bytes: Array("data: one\n\n".utf8))]
        let ended = Self.stream(chunks, milliseconds: 40)
        var abandoned = ended
        abandoned.abandoned = true
        var both = abandoned
        both.brokenOff = true
        let har = HARExport.bytes(Cassette(interactions: [abandoned, both, ended]))
        #expect(String(decoding: har, as: UTF8.self).components(separatedBy: "\"_abandoned\": true").count == 3)
        let imported = try HARImport.cassette(from: har, file: "export.har")
        #expect(imported.interactions.map(\.abandoned) == [true, true, false])
        #expect(imported.interactions.map(\.brokenOff) == [false, true, false])
        #expect(imported.interactions.first?.chunks == chunks)
    }
}
