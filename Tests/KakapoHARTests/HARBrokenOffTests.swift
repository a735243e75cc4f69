import Kakapo
import Testing

/// A stream recorded broken off keeps its mark through HAR, as `"_brokenOff": true` beside `_chunks`.
@Suite("HAR: broken-off streams")
struct HARBrokenOffTests {
    @Test("export writes _brokenOff beside _chunks and import reads it back; an ended stream has none")
    func roundTrip() throws {
        let chunks = [
            ResponseChunk(offsetMilliseconds: 0, bytes: Array("data: one\n\n".utf8)),
            ResponseChunk(offsetMilliseconds: 150, bytes: Array("data: two\n\n".utf8)),
        ]
        let broken = Interaction(
            request: HTTP.Request(method: .get, target: "/events", headers: ["Host": "api.test"]),
            response: HTTP.Response(
                status: 200, headers: ["Content-Type": "text/event-stream"], body: chunks.joinedBytes),
            recordedAt: "2026-11-24T06:00:00.000Z", durationMilliseconds: 160, chunks: chunks, brokenOff: true)
        var ended = broken
        ended.brokenOff = false
        let har = HARExport.bytes(Cassette(interactions: [broken, ended]))
        #expect(String(decoding: har, as: UTF8.self).components(separatedBy: "\"_brokenOff\": true").count == 2)
        let imported = try HARImport.cassette(from: har, file: "export.har")
        #expect(imported.interactions.map(\.brokenOff) == [true, false])
        #expect(imported.interactions.first?.chunks == chunks)
    }
}
