import KakapoCassette
import KakapoHTTP
import Testing

/// `"abandoned": true` beside a streamed response's chunks (or timed gRPC messages): written, read back,
/// absent in old cassettes, refused where it does not belong.
@Suite("Abandoned streams in the cassette")
struct AbandonedCodecTests {
    static let chunks = [
        ResponseChunk(offsetMilliseconds: 0, bytes: Array("data: one\n\n".utf8)),
        ResponseChunk(offsetMilliseconds: 300, bytes: Array("data: two\n\n".utf8)),
    ]

    @Test("an abandoned stream is written with abandoned after its chunks and read back the same")
    func roundTrip() throws {
        try expectStreamMarkRoundTrip(
            "abandoned", chunks: Self.chunks, recordedAt: "2026-11-28T20:00:00.000Z", durationMilliseconds: 310,
            mark: { $0.abandoned = $1 })
    }

    @Test("a cancelled gRPC call keeps abandoned beside its timed messages")
    func grpc() throws {
        // Two framed messages (flag 0, 4-byte length, bytes), one chunk each.
        let messages = [[UInt8]([0, 0, 0, 0, 2, 0x0A, 0x00]), [UInt8]([0, 0, 0, 0, 2, 0x0A, 0x00])]
        let chunks = [
            ResponseChunk(offsetMilliseconds: 0, bytes: messages[0]),
            ResponseChunk(offsetMilliseconds: 50, bytes: messages[1]),
        ]
        let interaction = Interaction(
            request: HTTP.Request(
                method: .post, target: "/demo.Greeter/StreamHellos", headers: ["Content-Type": "application/grpc"],
                body: [0, 0, 0, 0, 0]),
            response: HTTP.Response(
                status: 200, headers: ["Content-Type": "application/grpc"], body: chunks.joinedBytes),
            recordedAt: "2026-11-28T20:00:00.000Z", durationMilliseconds: 60, chunks: chunks, abandoned: true)
        let bytes = CassetteCodec.encodeFile(Cassette(interactions: [interaction]))
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(text.contains("\"grpc\"") && text.contains("\"abandoned\": true"), "\(text)")
        let read = try #require(try CassetteFile.decode(bytes, file: "grpc.json").interactions.first)
        #expect(read.abandoned && read.chunks == chunks, "\(read)")
        // Cancelled before any message came: no message carries an offset, and it is a stream all the same.
        var none = interaction
        none.response.body = []
        none.chunks = []
        let noneBytes = CassetteCodec.encodeFile(Cassette(interactions: [none]))
        let noneRead = try #require(try CassetteFile.decode(noneBytes, file: "none.json").interactions.first)
        #expect(noneRead.abandoned && noneRead.chunks == [], "\(String(decoding: noneBytes, as: UTF8.self))")
    }

    @Test("a cassette without abandoned reads as not abandoned; one misplaced or not a boolean is refused")
    func decoding() throws {
        func cassette(_ response: String) -> [UInt8] {
            Array(#"{"version": 1, "interactions": [{"request": {"method": "GET", "url": "/e"}, "response": "#.utf8)
                + Array(response.utf8) + Array("}]}".utf8)
        }
        let old = try CassetteFile.decode(
            cassette(#"{"status": 200, "chunks": [{"offsetMs": 0, "text": "a"}]}"#), file: "old.json")
        #expect(old.interactions.first?.abandoned == false)
        let both = try CassetteFile.decode(
            cassette(
                #"{"status": 200, "chunks": [{"offsetMs": 0, "text": "a"}], "abandoned": true, "brokenOff": true}"#),
            file: "both.json")
        #expect(both.interactions.first?.abandoned == true && both.interactions.first?.brokenOff == true)
        for (response, message) in [
            (
                #"{"status": 200, "body": {"text": "a"}, "abandoned": true}"#,
                "\"abandoned\" belongs to a streamed response"
            ),
            (#"{"status": 200, "chunks": [], "abandoned": 1}"#, "\"abandoned\" must be true or false, found"),
        ] {
            #expect {
                try CassetteFile.decode(cassette(response), file: "bad.json")
            } throws: { error in
                "\(error)".contains(message) && "\(error)".contains("/response/abandoned")
            }
        }
    }
}
