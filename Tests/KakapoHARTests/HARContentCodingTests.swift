import Foundation
import Kakapo
import Testing

/// A HAR's bodies made to agree with their `Content-Encoding` on import: decoded text under a coding Kakapo
/// writes is encoded again, under any other the coding is dropped, and the report says so. Whether the text
/// is decoded is read from the HAR's fields, never guessed by inflating it.
@Suite("HAR import: content codings")
struct HARContentCodingTests {
    static func read(_ name: String) throws -> (cassette: Cassette, report: HARImportReport) {
        let path = HARTests.fixtures + "/" + name
        return try HARImport.read(Array(try Data(contentsOf: URL(fileURLWithPath: path))), file: path)
    }

    @Test("a Chrome HAR with br and zstd: each body is encoded again from the decoded text, Content-Length fixed")
    func chromeBrotli() throws {
        let (cassette, report) = try Self.read("chrome-brotli.har")
        let responses = cassette.interactions.map(\.response)
        #expect(responses.count == 3)
        #expect(responses.map { $0.headers["Content-Encoding"] } == ["br", "br", "zstd"])
        let decoded = responses.map { response in
            ContentCoding(header: response.headers["Content-Encoding"])?.decode(response.body) ?? []
        }
        #expect(String(decoding: decoded[0], as: UTF8.self).hasPrefix(#"[{"sku":"K-1""#))
        #expect(responses[0].headers["Content-Length"] == String(responses[0].body.count))
        #expect(
            decoded[1] == [
                0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 0x0D, 0x49, 0x48, 0x44, 0x52,
            ])
        #expect(String(decoding: decoded[2], as: UTF8.self) == "Kakapo counted this season: 252 birds\n")
        #expect(
            report.lines == [
                "2 responses: content-encoding br written again from the decoded body",
                "1 response: Content-Length set to the length of the body replayed",
                "1 response: content-encoding zstd written again from the decoded body",
            ])
    }

    @Test("a mitmproxy HAR with deflate: every body, text that inflates as raw deflate too, is deflated again")
    func mitmproxyDeflate() throws {
        let (cassette, report) = try Self.read("mitmproxy-deflate.har")
        let expected: [[UInt8]] = [
            Array(#"{"items":[{"id":1,"name":"kakapo"},{"id":2,"name":"kea"},{"id":3,"name":"kiwi"}],"total":3}"#.utf8),
            Array("status: qA.prRacCQuVqB, TWOL".utf8),
            [0, 1, 2, 3, 255, 254, 10, 13, 0, 0, 0, 7, 200, 100],
        ]
        #expect(cassette.interactions.count == expected.count)
        for (interaction, content) in zip(cassette.interactions, expected) {
            let response = interaction.response
            #expect(response.headers["Content-Encoding"] == "deflate")
            #expect(ContentCoding.deflate.decode(response.body) == content, "\(interaction.request.target)")
            #expect(response.headers["Content-Length"] == String(response.body.count))
        }
        #expect(report.lines.first == "3 responses: content-encoding deflate written again from the decoded body")
        // The cassette stores them decoded and replays them deflated.
        let again = try CassetteFile.decode(CassetteCodec.encodeFile(cassette), file: "again.json")
        #expect(again.interactions.map(\.response.body) == cassette.interactions.map(\.response.body))
    }

    static func har(headers: String, content: String, bodySize: Int) -> [UInt8] {
        Array(
            """
            {"log": {"version": "1.2", "creator": {"name": "t", "version": "1"}, "entries": [
              {"startedDateTime": "2026-01-01T00:00:00Z", "time": 1,
               "request": {"method": "GET", "url": "http://a.test/x", "httpVersion": "HTTP/1.1", "headers": [],
                           "queryString": [], "cookies": [], "headersSize": -1, "bodySize": 0},
               "response": {"status": 200, "statusText": "OK", "httpVersion": "HTTP/1.1", "headers": \(headers),
                            "cookies": [], "content": \(content), "redirectURL": "", "headersSize": -1,
                            "bodySize": \(bodySize)},
               "cache": {}, "timings": {"send": 0, "wait": 1, "receive": 0}}]}}
            """.utf8)
    }

    @Test("base64 text whose length is the wire's bodySize and not content.size holds the encoded bytes: kept")
    func wireBytes() throws {
        let gzip = ContentCoding.gzip.encode(Array("hello, kakapo".utf8))
        let text = Data(gzip).base64EncodedString()
        let (gzipped, quiet) = try HARImport.read(
            Self.har(
                headers: #"[{"name": "Content-Encoding", "value": "gzip"}]"#,
                content: #"{"size": 13, "mimeType": "text/plain", "text": "\#(text)", "encoding": "base64"}"#,
                bodySize: gzip.count), file: "t.har")
        #expect(gzipped.interactions[0].response.body == gzip)
        #expect(quiet.isEmpty, "\(quiet.lines)")

        // The same text with content.size equal to its length is the decoded body, and is encoded again.
        let (decoded, _) = try HARImport.read(
            Self.har(
                headers: #"[{"name": "Content-Encoding", "value": "gzip"}]"#,
                content:
                    #"{"size": \#(gzip.count), "mimeType": "text/plain", "text": "\#(text)", "encoding": "base64"}"#,
                bodySize: gzip.count), file: "t.har")
        #expect(ContentCoding.gzip.decode(decoded.interactions[0].response.body) == gzip)

        // br bytes that do not decode stay as they are with their header.
        let brotli: [UInt8] = [0x0B, 0x02, 0x80, 0x68, 0x69, 0x03]
        let (kept, report) = try HARImport.read(
            Self.har(
                headers: #"[{"name": "Content-Encoding", "value": "br"}]"#,
                content:
                    #"{"size": 2, "mimeType": "text/plain", "text": "\#(Data(brotli).base64EncodedString())", "encoding": "base64"}"#,
                bodySize: brotli.count), file: "t.har")
        #expect(kept.interactions[0].response.body == brotli)
        #expect(kept.interactions[0].response.headers["Content-Encoding"] == "br")
        #expect(report.lines == ["1 response: content-encoding br kept with the encoded bytes the HAR holds"])
    }

    @Test("a list of codings, identity, and an empty body")
    func otherCodings() throws {
        let (listed, report) = try HARImport.read(
            Self.har(
                headers: #"[{"name": "Content-Encoding", "value": "gzip, br"}]"#,
                content: #"{"size": 2, "mimeType": "text/plain", "text": "hi"}"#, bodySize: 9), file: "t.har")
        #expect(listed.interactions[0].response.body == Array("hi".utf8))
        #expect(listed.interactions[0].response.headers["Content-Encoding"] == nil)
        #expect(report.lines == ["1 response: content-encoding gzip, br dropped, body kept decoded"])

        let (identity, quiet) = try HARImport.read(
            Self.har(
                headers: #"[{"name": "Content-Encoding", "value": "identity"}]"#,
                content: #"{"size": 2, "mimeType": "text/plain", "text": "hi"}"#, bodySize: 2), file: "t.har")
        #expect(identity.interactions[0].response.body == Array("hi".utf8))
        #expect(quiet.isEmpty)

        let (empty, none) = try HARImport.read(
            Self.har(
                headers: #"[{"name": "Content-Encoding", "value": "gzip"}]"#,
                content: #"{"size": 0, "mimeType": "text/plain", "text": ""}"#, bodySize: 0), file: "t.har")
        #expect(empty.interactions[0].response.body.isEmpty)
        #expect(none.isEmpty)
    }
}
