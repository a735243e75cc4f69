import KakapoJSON
import Testing

@Suite("JSON parser")
struct JSONParserTests {
    @Test("compact JSON survives a round trip byte for byte, key order and number spelling included")
    func roundTrip() throws {
        let text = #"{"z":1,"a":[1.0,1e3,-0.5,12345678901234567890],"m":{"k":null,"t":true,"f":false},"s":"é\"\\\n"}"#
        let value = try JSONParser.parse(text)
        #expect(JSONWriter().string(value) == text)
        #expect(value.objectValue?.keys == ["z", "a", "m", "s"])
        #expect(value["a"]?.arrayValue?[3].numberValue?.literal == "12345678901234567890")
    }

    @Test("decodes escapes, including surrogate pairs")
    func escapes() throws {
        let value = try JSONParser.parse(#"["\u00e9\ud83d\ude00\t\/", "plain"]"#)
        #expect(value.arrayValue?[0].stringValue == "é😀\t/")
    }

    @Test(
        "reports the line and column of a syntax error",
        arguments: [
            ("{\"a\": 1,\n  \"b\": }", 2, 8, "expected a value"),
            ("[1, 2", 1, 6, "expected ',' or ']'"),
            ("{\"a\" 1}", 1, 6, "expected ':'"),
            ("\"abc", 1, 1, "unterminated string"),
            ("[01]", 1, 3, "leading zeros"),
            ("{} x", 1, 4, "after the end of the document"),
            ("[\"a\nb\"]", 1, 4, "control character"),
            ("[tru]", 1, 2, "expected 'true'"),
        ])
    func syntaxErrors(input: String, line: Int, column: Int, message: String) {
        do {
            _ = try JSONParser.parse(input)
            Issue.record("\(input) parsed")
        } catch {
            #expect(error.line == line, "\(input): \(error)")
            #expect(error.column == column, "\(input): \(error)")
            #expect(error.message.contains(message), "\(input): \(error)")
        }
    }

    @Test("rejects duplicate keys only when asked")
    func duplicateKeys() throws {
        let text = #"{"a":1,"a":2}"#
        #expect(try JSONParser.parse(text).objectValue?.count == 2)
        #expect(throws: JSONParseError.self) { try JSONParser.parse(text, options: .init(rejectDuplicateKeys: true)) }
    }

    @Test("refuses nesting deeper than the limit instead of overflowing the stack")
    func depthLimit() throws {
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        #expect(throws: JSONParseError.self) { try JSONParser.parse(deep) }
        let fine = String(repeating: "[", count: 100) + String(repeating: "]", count: 100)
        #expect(try JSONParser.parse(fine).arrayValue != nil)
    }

    @Test("rejects invalid UTF-8 inside strings")
    func invalidUTF8() {
        #expect(throws: JSONParseError.self) { try JSONParser.parse([0x22, 0xFF, 0xFE, 0x22]) }
    }

    @Test("finds the line and column of a value by its path")
    func locationOfPath() {
        let text = "{\n  \"items\": [\n    {\"id\": 1},\n    {\"id\": \"two\"}\n  ]\n}"
        let location = JSONParser.location(of: [.key("items"), .index(1), .key("id")], in: Array(text.utf8))
        #expect(location?.line == 4)
        #expect(location?.column == 12)
        #expect(JSONParser.location(of: [.key("missing")], in: Array(text.utf8)) == nil)
    }
}

@Suite("JSON writer and values")
struct JSONWriterTests {
    @Test("the readable layout indents objects and keeps short scalar arrays on one line")
    func readableLayout() {
        let value: JSONValue = ["headers": [["Accept", "*/*"]], "empty": [], "n": 1]
        let expected = """
            {
              "headers": [
                ["Accept", "*/*"]
              ],
              "empty": [],
              "n": 1
            }
            """
        #expect(JSONWriter(layout: .readable).string(value) == expected)
    }

    @Test("escapes control characters and leaves other text as UTF-8")
    func escaping() throws {
        #expect(JSONWriter().string(.string("a\u{1}b\u{7F}\"é")) == #""a\u0001b\u007f\"é""#)
        // Escapes at the start, at the end, side by side, and none at all; every one round-trips.
        let samples = ["\"", "\\end\n", "\n\t\r\u{8}\u{C}\u{0}", "plain ascii", "", "ünï\u{1F99C}\\x"]
        for sample in samples {
            let written = JSONWriter().string(.string(sample))
            #expect(try JSONParser.parse(Array(written.utf8)) == .string(sample), "\(written)")
        }
        #expect(JSONWriter().string(.string("\n\t\\")) == #""\n\t\\""#)
    }

    @Test("compares as JSON: key order and number spelling do not matter, values do")
    func equivalence() throws {
        let a = try JSONParser.parse(#"{"a":1,"b":[1.0,{"c":"x"}]}"#)
        let b = try JSONParser.parse(#"{ "b": [1, {"c": "x"}], "a": 1e0 }"#)
        let c = try JSONParser.parse(#"{"a":1,"b":[1,{"c":"y"}]}"#)
        #expect(a.isEquivalent(to: b))
        #expect(!a.isEquivalent(to: c))
        #expect(a != b, "== compares exactly, including order")
    }
}
