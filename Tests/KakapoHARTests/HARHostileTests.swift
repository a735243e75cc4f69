import Foundation
import Kakapo
import Testing

/// HAR files a hostile or broken tool could write: each gives an error naming the file, line and path, or
/// imports within bounds, never a crash or unbounded memory.
@Suite("HAR import: hostile files")
struct HARHostileTests {
    /// A HAR of one entry whose response has `response` (JSON) spliced in.
    static func har(response: String, coding: String = "identity") -> [UInt8] {
        Array(
            """
            {"log": {"entries": [{"request": {"method": "GET", "url": "http://a.test/s"},
            "response": {"status": 200, "headers": [{"name": "Content-Encoding", "value": "\(coding)"}], \(response)}}]}}
            """.utf8)
    }

    static func error(_ bytes: [UInt8]) -> String? {
        do {
            _ = try HARImport.read(bytes, file: "hostile.har")
            return nil
        } catch {
            return error.description
        }
    }

    @Test(
        "_chunks offsets that go back in time are refused where they are (a replay of them lost the pieces after the last one in time)"
    )
    func backwardsOffsets() {
        let message = Self.error(
            Self.har(
                response: #""content": {"text": "abc"}, "_chunks": [{"offsetMs": 500, "text": "a"}, "#
                    + #"{"offsetMs": 5, "text": "b"}, {"offsetMs": 600, "text": "c"}]"#))
        #expect(message?.contains("hostile.har:2:") == true, "\(message ?? "imported")")
        #expect(
            message?.contains(
                "_chunks[1].offsetMs: expected milliseconds no earlier than the piece before (500.0), not 5.0")
                == true, "\(message ?? "imported")")
        // Equal offsets (pieces sent together) are fine.
        let equal = Self.har(
            response:
                #""content": {"text": "ab"}, "_chunks": [{"offsetMs": 5, "text": "a"}, {"offsetMs": 5, "text": "b"}]"#)
        #expect(Self.error(equal) == nil)
    }

    @Test("negative, huge and infinite offsets, chunks that are no array and bad base64 name their place")
    func badChunks() {
        for (chunks, expected) in [
            (#"[{"offsetMs": -1, "text": "a"}]"#, "_chunks[0].offsetMs: expected milliseconds from 0 to 604800000"),
            (#"[{"offsetMs": 1e308, "text": "a"}]"#, "_chunks[0].offsetMs: expected milliseconds from 0"),
            (#"[{"offsetMs": 1e999, "text": "a"}]"#, "_chunks[0].offsetMs: expected milliseconds from 0"),
            (#"{"a": 1}"#, "_chunks: expected an array, found an object"),
            (#"[{"offsetMs": 0, "text": "!!!", "encoding": "base64"}]"#, "_chunks[0].text: not valid base64"),
            (#"[{"text": "a"}]"#, "_chunks[0].offsetMs: missing"),
        ] {
            let message = Self.error(Self.har(response: #""content": {"text": "a"}, "_chunks": "# + chunks))
            #expect(message?.contains(expected) == true, "\(chunks): \(message ?? "imported")")
            #expect(message?.hasPrefix("hostile.har:") == true, "\(chunks): \(message ?? "imported")")
        }
    }

    @Test("a gzip bomb in _chunks or in the text is kept to the decoding limit, and nesting is bounded")
    func bombs() throws {
        let zeros = [UInt8](repeating: 0, count: 64 << 20)
        let bomb = ContentCoding.gzip.encode(zeros)
        let base64 = Data(bomb).base64EncodedString()
        let chunks = Self.har(
            response: #""content": {"text": "x"}, "_chunks": [{"offsetMs": 0, "text": ""# + base64
                + #"", "encoding": "base64"}]"#, coding: "gzip")
        let read = try HARImport.read(chunks, file: "bomb.har")
        #expect(read.cassette.interactions.first?.chunks == nil)
        #expect(read.report.lines.contains { $0.contains("_chunks ignored") })
        let deep = Array(#"{"log": {"entries": ["#.utf8) + Array(repeating: UInt8(ascii: "["), count: 100_000)
        #expect(Self.error(deep)?.contains("nesting deeper than") == true)
    }

    @Test("a Set-Cookie repeating Expires 200,000 times exports in seconds; the last one that is a date counts")
    func repeatedExpires() throws {
        let header =
            "id=7" + String(repeating: "; Expires=Tue, 01 Dec 2026 10:00:00 GMT", count: 200_000)
            + "; Expires=Wed, 02 Dec 2026 11:00:00 GMT; Expires=not a date"
        let cassette = Cassette(interactions: [
            Interaction(
                request: HTTP.Request(method: .get, target: "/", headers: ["Host": "a.test"]),
                response: HTTP.Response(status: 200, headers: HTTP.Headers([("Set-Cookie", header)]), body: []),
                recordedAt: "2026-11-20T10:00:00Z", durationMilliseconds: 1)
        ])
        let start = ContinuousClock.now
        let har = HARExport.document(cassette)
        // Generous: a DateFormatter made per attribute took about 25 s here, one per message under 2 s.
        #expect(ContinuousClock.now - start < .seconds(12))
        let cookie = har["log"]?["entries"]?.arrayValue?.first?["response"]?["cookies"]?.arrayValue?.first
        #expect(cookie?["expires"] == "2026-12-02T11:00:00.000Z")
    }
}
