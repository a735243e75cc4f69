import Foundation
import KakapoCassette
import KakapoHTTP
import KakapoJSON
import Testing

@Suite("Body fidelity")
struct BodyFidelityTests {
    static func roundTrip(_ body: [UInt8], headers: HTTP.Headers = ["Content-Type": "application/json"]) throws -> (
        stored: String, replayed: [UInt8]
    ) {
        let cassette = Cassette(interactions: [
            Interaction(
                request: HTTP.Request(method: .get, target: "/"),
                response: HTTP.Response(status: 200, headers: headers, body: body), recordedAt: "",
                durationMilliseconds: 0)
        ])
        let bytes = CassetteCodec.encodeFile(cassette)
        let loaded = try CassetteFile.decode(bytes, file: "test.json")
        return (String(decoding: bytes, as: UTF8.self), loaded.interactions[0].response.body)
    }

    @Test(
        "JSON is stored as a value and rebuilt byte for byte",
        arguments: [
            #"{"b":1,"a":[1.0,1e3,-0.0,12345678901234567890123],"c":{"é":"✓"},"d":[],"e":{}}"#,
            #"{"b": 1, "a": [1, 2], "c": {"d": null}}"#,
            "{\n  \"b\": 1,\n  \"a\": [\n    1,\n    2\n  ],\n  \"e\": []\n}\n",
            "{\n    \"key\": \"value\"\n}",
            "[\n\t{\n\t\t\"tab\": true\n\t}\n]\n",
            "[1,2,3]\n",
        ])
    func jsonValues(body: String) throws {
        let (stored, replayed) = try Self.roundTrip(Array(body.utf8))
        #expect(stored.contains(#""json": "#), "\(stored)")
        #expect(!stored.contains(#""text": "#))
        #expect(replayed == Array(body.utf8))
    }

    @Test(
        "JSON that no layout rebuilds exactly is kept as text",
        arguments: [
            #"{"url":"http:\/\/x"}"#, #"{"a" : 1}"#, #"{"a":1,"a":2}"#, "{\r\n  \"a\": 1\r\n}", #"{"a":"\u00e9"}"#,
        ])
    func textFallback(body: String) throws {
        let (stored, replayed) = try Self.roundTrip(Array(body.utf8))
        #expect(stored.contains(#""text": "#), "\(stored)")
        #expect(replayed == Array(body.utf8))
    }

    @Test("gzip and deflate bodies are stored decoded and encoded again on load", arguments: ContentCoding.allCases)
    func compressed(coding: ContentCoding) throws {
        let content = Array(#"{"compressed":true}"#.utf8)
        let (stored, replayed) = try Self.roundTrip(
            coding.encode(content), headers: ["Content-Type": "application/json", "Content-Encoding": coding.rawValue])
        #expect(stored.contains(#""encoding": "\#(coding.rawValue)""#))
        #expect(stored.contains(#""compressed": true"#))
        #expect(coding.decode(replayed) == content)
    }

    @Test("a body that claims gzip but is not is kept as its bytes")
    func brokenGzip() throws {
        let bytes: [UInt8] = [1, 2, 3, 4]
        let (stored, replayed) = try Self.roundTrip(bytes, headers: ["Content-Encoding": "gzip"])
        #expect(!stored.contains("\"encoding\""))
        #expect(replayed == bytes)
    }

    @Test("a hand-edited JSON body replays the edit in the recorded layout")
    func handEdited() throws {
        let (stored, _) = try Self.roundTrip(Array("{\n  \"title\": \"Old\",\n  \"n\": 1\n}\n".utf8))
        let edited = stored.replacingOccurrences(of: #""title": "Old""#, with: #""title": "Newer""#)
        let loaded = try CassetteFile.decode(Array(edited.utf8), file: "edited.json")
        #expect(
            String(decoding: loaded.interactions[0].response.body, as: UTF8.self)
                == "{\n  \"title\": \"Newer\",\n  \"n\": 1\n}\n")
    }

    @Test("an unknown layout or encoding is an error naming the field")
    func invalidForms() {
        let bad =
            #"{"version":1,"interactions":[{"request":{"method":"GET","url":"/"},"response":{"status":200,"body":{"json":1,"layout":"fancy"}}}]}"#
        #expect(throws: CassetteError.self) { try CassetteFile.decode(Array(bad.utf8), file: "x.json") }
        let encoding = bad.replacingOccurrences(of: #""layout":"fancy""#, with: #""encoding":"compress""#)
        do {
            _ = try CassetteFile.decode(Array(encoding.utf8), file: "x.json")
            Issue.record("decoded")
        } catch {
            #expect(error.message.contains("\"encoding\" must be"))
        }
    }
}
