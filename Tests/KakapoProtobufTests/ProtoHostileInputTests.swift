import KakapoJSON
import KakapoProtobuf
import Testing

@Suite("ProtoSchema on hostile bytes")
struct ProtoHostileInputTests {
    let schema: ProtoSchema

    init() throws { schema = try ProtoFixtures.schema() }

    private func error(_ bytes: [UInt8], type: String = "kakapo.test.Everything") -> String {
        do {
            let json = try schema.json(from: bytes, type: type)
            return "no error: \(ProtoFixtures.text(json))"
        } catch {
            return error.message
        }
    }

    @Test("a varint longer than 10 bytes, or past 64 bits, is refused")
    func longVarints() {
        // Field 22 (int32 renamed), wire type 0.
        let tag: [UInt8] = [0xB0, 0x01]
        #expect(error(tag + Array(repeating: 0xFF, count: 10) + [0x01]).contains("a varint longer than 10 bytes"))
        #expect(error(tag + Array(repeating: 0xFF, count: 9) + [0x02]).contains("a varint larger than 64 bits"))
        // Ten bytes whose last is 1 is the largest varint there is: -1 as an int32.
        #expect(
            (try? schema.json(from: tag + Array(repeating: 0xFF, count: 9) + [0x01], type: "kakapo.test.Everything"))
                == ["renamed": -1])
        #expect(error(Array(repeating: 0xFF, count: 11)).contains("longer than 10 bytes"))
    }

    @Test("a length past the end of the message is refused with where it is")
    func hugeLengths() {
        // Field 6 (repeated string names), length 2^35.
        let message = error([0x32, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01, 0x61])
        #expect(message.contains("a length of 34359738368 at byte 1 but only 1 bytes remain"), "\(message)")
        #expect(error([0x32, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01]).contains("a length of"))
        // Inside a nested message the bound is the nested message's end, not the buffer's.
        let nested = error([0x12, 0x03, 0x0A, 0x05, 0x61])
        #expect(nested.contains("a length of 5"), "\(nested)")
    }

    @Test("every prefix of a valid message reads or fails cleanly")
    func truncations() throws {
        for golden in ProtoFixtures.goldens {
            for length in 0..<golden.bytes.count {
                _ = try? schema.json(from: Array(golden.bytes[..<length]), type: golden.type)
            }
        }
        let everything = try #require(ProtoFixtures.goldens.first { $0.name == "everything" })
        let message = error(Array(everything.bytes.dropLast()))
        #expect(message.contains("cut short") || message.contains("a length of"), "\(message)")
    }

    @Test("messages nested past 100 levels are refused; 90 levels read")
    func deepNesting() throws {
        func nested(_ depth: Int) -> [UInt8] {
            // Everything.child (field 21) inside itself, innermost holding renamed = 1.
            var bytes: [UInt8] = [0xB0, 0x01, 0x01]
            for _ in 0..<depth { bytes = Descriptor.lengthDelimited(21, bytes) }
            return bytes
        }
        let json = try schema.json(from: nested(90), type: "kakapo.test.Everything")
        var inner = json
        for _ in 0..<90 { inner = inner["child"] ?? .null }
        #expect(inner == ["renamed": 1])
        #expect(error(nested(101)).contains("nested deeper than 100 levels"))
        #expect(error(nested(100_000)).contains("nested deeper than 100 levels"))
        // The same through JSON: nested objects past the bound are refused, not recursed into.
        var deep: JSONValue = ["renamed": 1]
        for _ in 0..<150 { deep = ["child": deep] }
        let encodeError = #expect(throws: ProtoError.self) {
            try schema.message(from: deep, type: "kakapo.test.Everything")
        }
        #expect(encodeError?.message.contains("nested deeper than 100 levels") == true)
    }

    @Test("unknown groups nested deeply, mismatched or unterminated are refused")
    func groups() {
        // Unknown field 100 as a start group (tag 0xA3 0x06), 200 deep.
        let start: [UInt8] = [0xA3, 0x06]
        let end: [UInt8] = [0xA4, 0x06]
        let deep =
            Array(Array(repeating: start, count: 200).joined()) + Array(Array(repeating: end, count: 200).joined())
        #expect(error(deep).contains("groups nested deeper than 100 levels"))
        #expect(error(start).contains("no end tag"))
        #expect(error(start + [0xAC, 0x06]).contains("ended by the end tag of group 101"))
        #expect(error(end).contains("end-group tag without a group"))
        // A known group field read as a group; a well-formed unknown group is skipped.
        #expect((try? schema.json(from: start + [0x08, 0x01] + end, type: "kakapo.test.Everything")) == [:])
    }

    @Test("wrong wire types, invalid field numbers and wire types, and bad UTF-8 name the field")
    func malformedFields() {
        // Field 6 (names, a string) as a varint.
        #expect(error([0x30, 0x01]).contains("field 6 (names) of kakapo.test.Everything at byte 0: wire type 0"))
        // Field number 0, wire types 6 and 7.
        #expect(error([0x00, 0x01]).contains("field number 0"))
        #expect(error([0x0E]).contains("wire type 6"))
        #expect(error([0x0F]).contains("wire type 7"))
        // A string that is not UTF-8, nested: the innermost field is named, once.
        let message = error([0x12, 0x03, 0x0A, 0x01, 0xFF])
        #expect(message == "field 1 (label) of kakapo.test.Everything.Inner at byte 2: a string that is not UTF-8")
        // A packed field whose bytes end inside an element.
        #expect(error([0x1A, 0x02, 0x01, 0x80]).contains("cut short"))
        #expect(error([0x2A, 0x04, 0, 0, 0, 0]).contains("cut short"))
    }

    @Test("random and mutated bytes never trap, and what reads writes back to JSON that reads the same")
    func fuzz() throws {
        var random = SplitMix64(seed: 0x6B61_6B61_706F)
        let types = [
            "kakapo.test.Everything", "kakapo.test.Scalars", "kakapo.test.WellKnown", "kakapo.legacy.Old",
            "google.protobuf.Struct", "google.protobuf.Any",
        ]
        var read = 0
        for round in 0..<20_000 {
            var bytes: [UInt8]
            if round % 2 == 0 || ProtoFixtures.goldens.isEmpty {
                bytes = (0..<Int(random.next() % 48)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            } else {
                bytes = ProtoFixtures.goldens[Int(random.next() % UInt64(ProtoFixtures.goldens.count))].bytes
                for _ in 0..<(1 + Int(random.next() % 4)) where !bytes.isEmpty {
                    bytes[Int(random.next() % UInt64(bytes.count))] = UInt8(truncatingIfNeeded: random.next())
                }
            }
            let type = types[Int(random.next() % UInt64(types.count))]
            guard let json = try? schema.json(from: bytes, type: type) else { continue }
            read += 1
            // Whatever was read is valid JSON for the type: it writes, and what it writes reads the same.
            let written = try schema.message(from: json, type: type)
            let again = try schema.json(from: written, type: type)
            #expect(ProtoFixtures.sameJSON(again, json), "\(ProtoFixtures.hex(bytes)) as \(type)")
        }
        #expect(read > 1000)
    }
}

extension ProtoHostileInputTests {
    @Test("random JSON never traps, and what writes reads back to JSON that writes the same bytes")
    func jsonFuzz() throws {
        var random = SplitMix64(seed: 33)
        let keys = [
            "scalars", "inner", "packedInts", "packedSints", "doubles", "names", "blobs", "inners", "colors", "counts",
            "byId", "byFlag", "colorByNumber", "blobByKey", "choiceText", "choiceNumber", "choiceInner", "maybeCount",
            "child", "renamed", "mood", "aDouble", "aFloat", "anInt64", "aUint64", "anInt32", "aFixed64", "aBool",
            "aString", "someBytes", "aUint32", "aColor", "aSint32", "when", "howLong", "int64Value", "document",
            "anyJson", "list", "packed", "mask", "times", "values", "nothingAtAll", "label", "weight", "@type", "value",
            "x",
        ]
        let numbers = [
            "0", "-0", "1", "-1", "1.5", "1e400", "-1e-400", "2147483648", "18446744073709551616", "3e38", "1e2",
        ]
        let strings = [
            "", "NaN", "Infinity", "-Infinity", "AAE=", "_-8", "2023-11-14T22:13:20Z", "1.5s", "RED", "HAPPY", "7",
            "-9",
            "fooBar,baz", "type.googleapis.com/kakapo.test.HelloRequest",
            "type.googleapis.com/google.protobuf.Duration",
            "true", "false", "é",
        ]
        func value(_ depth: Int) -> JSONValue {
            switch random.next() % (depth > 5 ? 5 : 8) {
            case 0: return .null
            case 1: return .bool(random.next() % 2 == 0)
            case 2, 3: return .number(JSONNumber(literal: numbers[Int(random.next() % UInt64(numbers.count))]))
            case 4: return .string(strings[Int(random.next() % UInt64(strings.count))])
            case 5: return .array((0..<Int(random.next() % 4)).map { _ in value(depth + 1) })
            default:
                var object = JSONObject()
                for _ in 0..<Int(random.next() % 5) {
                    object[keys[Int(random.next() % UInt64(keys.count))]] = value(depth + 1)
                }
                return .object(object)
            }
        }
        let types = ["kakapo.test.Everything", "kakapo.test.WellKnown", "kakapo.test.Scalars", "google.protobuf.Any"]
        var written = 0
        for _ in 0..<20_000 {
            let type = types[Int(random.next() % UInt64(types.count))]
            let json = value(0)
            guard let bytes = try? schema.message(from: json, type: type) else { continue }
            written += 1
            let read = try schema.json(from: bytes, type: type)
            #expect(try schema.message(from: read, type: type) == bytes, "\(ProtoFixtures.text(json)) as \(type)")
        }
        #expect(written > 1000)
    }
}

/// A small deterministic generator (SplitMix64), so the fuzz loop tries the same inputs on every run.
struct SplitMix64 {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
