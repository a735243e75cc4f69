import KakapoCassette
import KakapoHTTP
import Testing

/// `"brokenOff": true` beside a streamed response's chunks: written, read back, absent in old cassettes.
@Suite("Broken-off streams in the cassette")
struct BrokenOffCodecTests {
    static let chunks = [
        ResponseChunk(offsetMilliseconds: 0, bytes: Array("data: one\n\n".utf8)),
        ResponseChunk(offsetMilliseconds: 120, bytes: Array("data: two\n\n".utf8)),
    ]

    @Test("a broken-off stream is written with brokenOff after its chunks and read back the same")
    func roundTrip() throws {
        try expectStreamMarkRoundTrip(
            "brokenOff", chunks: Self.chunks, recordedAt: "2026-11-24T05:30:00.000Z", durationMilliseconds: 130,
            mark: { $0.brokenOff = $1 })
    }

    @Test("a cassette without brokenOff reads as not broken off; one misplaced or not a boolean is refused")
    func decoding() throws {
        func cassette(_ response: String) -> [UInt8] {
            Array(#"{"version": 1, "interactions": [{"request": {"method": "GET", "url": "/e"}, "response": "#.utf8)
                + Array(response.utf8) + Array("}]}".utf8)
        }
        let old = try CassetteFile.decode(
            cassette(#"{"status": 200, "chunks": [{"offsetMs": 0, "text": "a"}]}"#), file: "old.json")
        #expect(old.interactions.first?.brokenOff == false)
        #expect(
            try CassetteFile.decode(
                cassette(#"{"status": 200, "chunks": [{"offsetMs": 0, "text": "a"}], "brokenOff": false}"#),
                file: "x.json"
            ).interactions.first?.brokenOff == false)
        for (response, message) in [
            (
                #"{"status": 200, "body": {"text": "a"}, "brokenOff": true}"#,
                "\"brokenOff\" belongs to a streamed response"
            ),
            (#"{"status": 200, "chunks": [], "brokenOff": "yes"}"#, "\"brokenOff\" must be true or false, found"),
        ] {
            #expect {
                try CassetteFile.decode(cassette(response), file: "bad.json")
            } throws: { error in
                "\(error)".contains(message) && "\(error)".contains("/response/brokenOff")
            }
        }
    }
}
