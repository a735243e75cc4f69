import Foundation
import Kakapo
import Testing

/// HAR export against the HAR 1.2 spec (every required field, one page that each entry names, creator and
/// browser, cookies from the headers) and the fields Kakapo adds so a round trip loses nothing: `_chunks`
/// for a streamed answer, `_encoded` for wire bytes in a coding Kakapo cannot decode.
@Suite("HAR export")
struct HARExportTests {
    static let chunks = [
        ResponseChunk(offsetMilliseconds: 0, bytes: Array("data: one\n\n".utf8)),
        ResponseChunk(offsetMilliseconds: 12.5, bytes: Array("data: two\n\n".utf8)),
        ResponseChunk(offsetMilliseconds: 250.3, bytes: [0x64, 0x3A, 0xFF, 0x0A, 0x0A]),
        ResponseChunk(offsetMilliseconds: 1_000, bytes: Array("data: [DONE]\n\n".utf8)),
    ]

    static let cassette = Cassette(interactions: [
        Interaction(
            request: HTTP.Request(
                method: .post, target: "/login?next=%2Fhome",
                headers: [
                    "Host": "api.example.com", "Content-Type": "application/x-www-form-urlencoded",
                    "Cookie": "session=abc; theme=dark",
                ], body: Array("user=ada".utf8)),
            response: HTTP.Response(
                status: 200,
                headers: HTTP.Headers([
                    ("Content-Type", "application/json"), ("Content-Encoding", "gzip"),
                    (
                        "Set-Cookie",
                        "id=7; Path=/; Domain=example.com; Expires=Tue, 01 Dec 2026 10:00:00 GMT; HttpOnly; Secure"
                    ),
                    ("Set-Cookie", "seen=1; Max-Age=60"),
                ]),
                body: ContentCoding.gzip.encode(Array(#"{"ok":true}"#.utf8))),
            recordedAt: "2026-11-20T10:00:05.000Z", durationMilliseconds: 12.5),
        Interaction(
            request: HTTP.Request(method: .get, target: "/events", headers: ["Host": "api.example.com"]),
            response: HTTP.Response(
                status: 200, headers: ["Content-Type": "text/event-stream"], body: chunks.joinedBytes),
            recordedAt: "2026-11-20T10:00:01.000Z", durationMilliseconds: 1_000, chunks: chunks),
        Interaction(
            request: HTTP.Request(method: .get, target: "/font", headers: ["Host": "api.example.com"]),
            response: HTTP.Response(
                status: 200, headers: ["Content-Type": "font/woff2", "Content-Encoding": "br"],
                body: [0x0B, 0x02, 0x80, 0x68, 0x69, 0x03]),
            recordedAt: "", durationMilliseconds: 0),
    ])

    /// Records an issue for each field HAR 1.2 requires that `object` lacks or holds in the wrong kind.
    static func require(_ object: JSONValue?, _ fields: [String: String], at path: String) {
        guard let object = object?.objectValue else {
            Issue.record("\(path): expected an object")
            return
        }
        for (name, kind) in fields {
            guard let value = object[name] else {
                Issue.record("\(path).\(name): missing")
                continue
            }
            let matches: Bool
            switch kind {
            case "string": matches = value.stringValue != nil
            case "number": matches = value.numberValue != nil
            case "array": matches = value.arrayValue != nil
            case "object": matches = value.objectValue != nil
            default: matches = false
            }
            #expect(matches, "\(path).\(name): expected a \(kind)")
        }
    }

    @Test("every field HAR 1.2 requires is there: one page named by every entry, creator and browser")
    func requiredFields() throws {
        let har = try JSONParser.parse(HARExport.bytes(Self.cassette, scheme: "https", title: "api.json"))
        let log = har["log"]
        Self.require(
            log, ["version": "string", "creator": "object", "browser": "object", "pages": "array", "entries": "array"],
            at: "log")
        #expect(log?["version"] == "1.2")
        Self.require(log?["creator"], ["name": "string", "version": "string"], at: "log.creator")
        Self.require(log?["browser"], ["name": "string", "version": "string"], at: "log.browser")
        let pages = try #require(log?["pages"]?.arrayValue)
        #expect(pages.count == 1)
        Self.require(
            pages.first, ["startedDateTime": "string", "id": "string", "title": "string", "pageTimings": "object"],
            at: "log.pages[0]")
        #expect(pages.first?["title"] == "api.json")
        // The page starts with the earliest entry.
        #expect(pages.first?["startedDateTime"] == "2026-11-20T10:00:01.000Z")
        let pageID = try #require(pages.first?["id"]?.stringValue)
        let entries = try #require(log?["entries"]?.arrayValue)
        #expect(entries.count == 3)
        let dates = ISO8601DateFormatter()
        dates.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        for (index, entry) in entries.enumerated() {
            let path = "log.entries[\(index)]"
            Self.require(
                entry,
                [
                    "pageref": "string", "startedDateTime": "string", "time": "number", "request": "object",
                    "response": "object", "cache": "object", "timings": "object",
                ], at: path)
            #expect(entry["pageref"]?.stringValue == pageID)
            #expect(dates.date(from: entry["startedDateTime"]?.stringValue ?? "") != nil, "\(path).startedDateTime")
            Self.require(
                entry["request"],
                [
                    "method": "string", "url": "string", "httpVersion": "string", "cookies": "array",
                    "headers": "array", "queryString": "array", "headersSize": "number", "bodySize": "number",
                ], at: path + ".request")
            Self.require(
                entry["response"],
                [
                    "status": "number", "statusText": "string", "httpVersion": "string", "cookies": "array",
                    "headers": "array", "content": "object", "redirectURL": "string", "headersSize": "number",
                    "bodySize": "number",
                ], at: path + ".response")
            Self.require(
                entry["response"]?["content"], ["size": "number", "mimeType": "string"], at: path + ".response.content")
            Self.require(
                entry["timings"], ["send": "number", "wait": "number", "receive": "number"], at: path + ".timings")
        }
        Self.require(
            entries[0]["request"]?["postData"], ["mimeType": "string", "params": "array", "text": "string"],
            at: "log.entries[0].request.postData")
    }

    @Test("cookies come from Cookie and Set-Cookie, with path, domain, expires, httpOnly and secure")
    func cookies() throws {
        let har = HARExport.document(Self.cassette)
        let entry = try #require(har["log"]?["entries"]?.arrayValue?.first)
        #expect(
            entry["request"]?["cookies"] == [["name": "session", "value": "abc"], ["name": "theme", "value": "dark"]])
        let cookies = try #require(entry["response"]?["cookies"]?.arrayValue)
        #expect(cookies.count == 2)
        #expect(
            cookies.first == [
                "name": "id", "value": "7", "path": "/", "domain": "example.com",
                "expires": "2026-12-01T10:00:00.000Z", "httpOnly": true, "secure": true,
            ])
        // Max-Age counts from when the answer was recorded.
        #expect(cookies.last == ["name": "seen", "value": "1", "expires": "2026-11-20T10:01:05.000Z"])
    }

    @Test("a streamed answer's chunks and offsets survive cassette → HAR → cassette exactly")
    func chunksRoundTrip() throws {
        let har = HARExport.bytes(Self.cassette)
        let (again, report) = try HARImport.read(har, file: "export.har")
        #expect(again.interactions[1].chunks == Self.chunks)
        #expect(again.interactions[1].response.body == Self.chunks.joinedBytes)
        #expect(report.lines.allSatisfy { !$0.contains("_chunks") }, "\(report.lines)")
        // And through a cassette file.
        let saved = try CassetteFile.decode(CassetteCodec.encodeFile(again), file: "again.json")
        #expect(saved.interactions[1].chunks == Self.chunks)
    }

    @Test("_chunks that do not add up to content.text are ignored and reported; a bad offset names the chunk")
    func editedChunks() throws {
        // The first chunk edited, content.text (base64 here: a chunk is not UTF-8) not: the text wins.
        let text = String(decoding: HARExport.bytes(Self.cassette), as: UTF8.self)
            .replacingOccurrences(of: #""text": "data: one\n\n""#, with: #""text": "data: 1\n\n""#)
        #expect(text.contains("data: 1"))
        let (edited, report) = try HARImport.read(Array(text.utf8), file: "edited.har")
        #expect(edited.interactions[1].chunks == nil)
        #expect(edited.interactions[1].response.body == Self.chunks.joinedBytes)
        #expect(report.lines.contains("1 response: _chunks ignored, they do not add up to content.text"))

        let bad = String(decoding: HARExport.bytes(Self.cassette), as: UTF8.self)
            .replacingOccurrences(of: "\"offsetMs\": 12.5", with: "\"offsetMs\": 1e300")
        #expect {
            try HARImport.read(Array(bad.utf8), file: "bad.har")
        } throws: { error in
            "\(error)".contains("log.entries[1].response._chunks[1].offsetMs: expected milliseconds")
        }
    }

    @Test("br bytes Kakapo cannot decode are exported as base64 marked _encoded and imported back as they were")
    func encodedRoundTrip() throws {
        let har = HARExport.document(Self.cassette)
        let content = try #require(har["log"]?["entries"]?.arrayValue?.last?["response"]?["content"])
        #expect(content["_encoded"] == true)
        #expect(content["encoding"] == "base64")
        let (again, _) = try HARImport.read(HARExport.bytes(Self.cassette), file: "export.har")
        #expect(again.interactions[2].response == Self.cassette.interactions[2].response)
        #expect(again.interactions[0].response.headers == Self.cassette.interactions[0].response.headers)
        #expect(
            ContentCoding.gzip.decode(again.interactions[0].response.body)
                == ContentCoding.gzip.decode(Self.cassette.interactions[0].response.body))
    }
}
