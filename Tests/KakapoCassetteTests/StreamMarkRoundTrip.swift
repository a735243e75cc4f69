import KakapoCassette
import KakapoHTTP
import Testing

/// A mark that says how a recorded stream ended (`brokenOff`, `abandoned`): an event stream with `chunks`
/// and the mark is written with it, read back the same, and without the mark written without it.
func expectStreamMarkRoundTrip(
    _ name: String, chunks: [ResponseChunk], recordedAt: String, durationMilliseconds: Double,
    mark: (inout Interaction, Bool) -> Void, sourceLocation: SourceLocation = #_sourceLocation
) throws {
    var interaction = Interaction(
        request: HTTP.Request(method: .get, target: "/events"),
        response: HTTP.Response(status: 200, headers: ["Content-Type": "text/event-stream"], body: chunks.joinedBytes),
        recordedAt: recordedAt, durationMilliseconds: durationMilliseconds, chunks: chunks)
    mark(&interaction, true)
    let bytes = CassetteCodec.encodeFile(Cassette(interactions: [interaction]))
    let text = String(decoding: bytes, as: UTF8.self)
    #expect(text.contains("\"\(name)\": true"), "\(text)", sourceLocation: sourceLocation)
    #expect(
        try CassetteFile.decode(bytes, file: "\(name).json").interactions == [interaction],
        sourceLocation: sourceLocation)
    var ended = interaction
    mark(&ended, false)
    let endedText = String(decoding: CassetteCodec.encodeFile(Cassette(interactions: [ended])), as: UTF8.self)
    #expect(!endedText.contains(name), sourceLocation: sourceLocation)
}
