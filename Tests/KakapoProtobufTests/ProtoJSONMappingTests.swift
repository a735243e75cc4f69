import KakapoJSON
import KakapoProtobuf
import Testing

@Suite("ProtoSchema's proto3 JSON mapping beyond the goldens")
struct ProtoJSONMappingTests {
    let schema: ProtoSchema

    init() throws { schema = try ProtoFixtures.schema() }

    private func bytes(_ json: JSONValue, _ type: String = "kakapo.test.Scalars") throws -> [UInt8] {
        try schema.message(from: json, type: type)
    }

    private func failure(_ json: JSONValue, _ type: String = "kakapo.test.Scalars") -> String {
        do {
            return "no error: \(ProtoFixtures.hex(try schema.message(from: json, type: type)))"
        } catch {
            return error.message
        }
    }

    @Test("accepts .proto names, enum numbers, integers as numbers or strings in any exact spelling")
    func lenientInput() throws {
        let canonical = try bytes([
            "aDouble": 1.5, "anInt64": "500", "aColor": "GREEN", "someBytes": "/w==", "anInt32": 100, "aUint64": "7",
        ])
        let lenient = try bytes([
            "a_double": "1.5", "an_int64": 5e2, "a_color": 2, "some_bytes": "_w", "an_int32": "1.00e2",
            "a_uint64": 7.0,
        ])
        #expect(ProtoFixtures.hex(lenient) == ProtoFixtures.hex(canonical))
        // null is a field left at its default.
        #expect(try bytes(["anInt32": nil, "aString": nil]).isEmpty)
        // Defaults are not written in proto3, but optional fields and oneof members are.
        #expect(try bytes(["anInt32": 0, "aString": "", "aBool": false]).isEmpty)
        #expect(try bytes(["maybeCount": 0], "kakapo.test.Everything") == [0x98, 0x01, 0x00])
    }

    static let refusalCases: [(JSONValue, String)] = [
        (["anInt32": 2_147_483_648], "/anInt32: expected an integer in the range of int32, got 2147483648"),
        (["aUint32": -1], "/aUint32: expected an integer in the range of uint32, got -1"),
        (["aUint64": "18446744073709551616"], "/aUint64: expected an integer in the range of uint64"),
        (["anInt64": "-9223372036854775809"], "/anInt64: expected an integer in the range of int64"),
        (["anInt32": 1.5], "/anInt32: expected an integer, got 1.5"),
        (["anInt32": "12abc"], "/anInt32: expected an integer"),
        (["anInt32": true], "/anInt32: expected an integer, got a boolean"),
        (["aFloat": 1e39], "/aFloat: expected a number in the range of a float"),
        (["aDouble": "inf"], "/aDouble: expected a number, \"NaN\" or \"Infinity\""),
        (["aDouble": .number(JSONNumber(literal: "1e999"))], "/aDouble: expected a number in the range of a double"),
        (["aBool": "true"], "/aBool: expected true or false"),
        (["aString": 5], "/aString: expected a string, got 5"),
        (["someBytes": "not base64!"], "/someBytes: expected a base64 string"),
        (["aColor": "PURPLE"], "/aColor: \"PURPLE\" is not a value of kakapo.test.Color"),
        (["nope": 1], "/nope: kakapo.test.Scalars has no field \"nope\""),
        (["anInt32": 1, "an_int32": 2], "/an_int32: field an_int32 is given twice (also as \"anInt32\")"),
        ([1, 2], "(the top level): expected an object for a kakapo.test.Scalars, got an array"),
    ]

    @Test(
        "refuses numbers out of their field's range, not integers, and not numbers",
        arguments: ProtoJSONMappingTests.refusalCases)
    func refusals(json: JSONValue, expected: String) {
        let message = failure(json)
        #expect(message.hasPrefix(expected), "\(message)")
    }

    @Test("errors point into nested messages, lists and maps")
    func pointers() {
        let type = "kakapo.test.Everything"
        #expect(failure(["scalars": ["nope": 1]], type).hasPrefix("/scalars/nope: "))
        #expect(failure(["scalars": []], type).hasPrefix("/scalars: expected an object for a kakapo.test.Scalars"))
        #expect(failure(["inners": [[:], ["weight": "x"]]], type).hasPrefix("/inners/1/weight: expected an integer"))
        #expect(failure(["packedInts": [1, "a"]], type).hasPrefix("/packedInts/1: expected an integer"))
        #expect(failure(["byId": ["x": "y"]], type).hasPrefix("/byId/x: expected an integer"))
        #expect(failure(["byFlag": ["yes": [:]]], type).hasPrefix("/byFlag/yes: a map key of \"yes\""))
        #expect(failure(["counts": [1]], type).hasPrefix("/counts: expected an object for a map"))
        #expect(failure(["names": "a"], type).hasPrefix("/names: expected an array"))
        let oneof = failure(["choiceText": "a", "choiceNumber": 1], type)
        #expect(oneof.hasPrefix("/choiceNumber: \"choiceText\" is already set, of the same oneof"), "\(oneof)")
    }

    @Test("reads well-known types in every form the JSON mapping allows, and refuses others")
    func wellKnownInput() throws {
        let type = "kakapo.test.WellKnown"
        let utc = try bytes(["when": "2023-11-14T22:13:20.123Z"], type)
        #expect(try bytes(["when": "2023-11-14T23:43:20.123+01:30"], type) == utc)
        #expect(try bytes(["when": "2023-11-14t22:13:20.123000z"], type) == utc)
        #expect(try schema.json(from: utc, type: type) == ["when": "2023-11-14T22:13:20.123Z"])
        #expect(failure(["when": "2023-02-30T00:00:00Z"], type).contains("is not a Timestamp"))
        #expect(failure(["when": "10000-01-01T00:00:00Z"], type).contains("is not a Timestamp"))
        #expect(failure(["when": 5], type).hasPrefix("/when: expected a string for a google.protobuf.Timestamp"))
        let duration = try bytes(["howLong": "-1.5s"], type)
        #expect(try schema.json(from: duration, type: type) == ["howLong": "-1.500s"])
        #expect(failure(["howLong": "1.5"], type).contains("is not a Duration"))
        #expect(failure(["howLong": "1.1234567891s"], type).contains("is not a Duration"))
        let mask = try bytes(["mask": "fooBar,baz.quxQuux"], type)
        #expect(try schema.json(from: mask, type: type) == ["mask": "fooBar,baz.quxQuux"])
        #expect(failure(["packed": ["@type": "type.googleapis.com/no.Such"]], type).contains("no.Such"))
        #expect(failure(["packed": ["name": "x"]], type).contains("without a string \"@type\""))
        let wrapped = try bytes(["int64Value": 5, "boolValue": nil, "anyJson": nil], type)
        #expect(try schema.json(from: wrapped, type: type) == ["int64Value": "5", "anyJson": nil])
    }

    @Test("writes and reads a well-known type at the top level, as gRPC methods that take one do")
    func wellKnownTopLevel() throws {
        let timestamp = try schema.message(from: "1970-01-01T00:00:01Z", type: "google.protobuf.Timestamp")
        #expect(timestamp == [0x08, 0x01])
        #expect(try schema.json(from: timestamp, type: "google.protobuf.Timestamp") == "1970-01-01T00:00:01Z")
        #expect(try schema.json(from: [], type: "google.protobuf.Empty") == [:])
        #expect(try schema.json(from: [], type: "google.protobuf.Value") == nil)
        let structure: JSONValue = ["a": [1, "b", nil, ["c": true]]]
        let structBytes = try schema.message(from: structure, type: "google.protobuf.Struct")
        #expect(ProtoFixtures.sameJSON(try schema.json(from: structBytes, type: "google.protobuf.Struct"), structure))
        // A Timestamp outside years 1 to 9999 on the wire is an error, not a made-up date.
        let error = #expect(throws: ProtoError.self) {
            try schema.json(from: [0x08, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F], type: "google.protobuf.Timestamp")
        }
        #expect(error?.message.contains("outside years 1 to 9999") == true)
    }

    @Test(
        "reads repeated fields packed or not whatever the schema says, merges repeated messages, keeps the last scalar")
    func wireRules() throws {
        let type = "kakapo.test.Everything"
        // packed_ints (3) sent unpacked, packed_sints (4, [packed = false]) sent packed.
        let json = try schema.json(from: [0x18, 0x01, 0x18, 0x02, 0x22, 0x02, 0x02, 0x03], type: type)
        #expect(json == ["packedInts": [1, 2], "packedSints": ["1", "-2"]])
        // inner (2) twice merges; renamed (22) twice keeps the last.
        let merged = try schema.json(
            from: [0x12, 0x03, 0x0A, 0x01, 0x61, 0x12, 0x02, 0x10, 0x02, 0xB0, 0x01, 0x05, 0xB0, 0x01, 0x07], type: type
        )
        #expect(merged == ["inner": ["label": "a", "weight": 2], "renamed": 7])
        // A oneof keeps its last member; a map its last value for a key.
        let oneof = try schema.json(from: [0x7A, 0x01, 0x61, 0x80, 0x01, 0x05], type: type)
        #expect(oneof == ["choiceNumber": "5"])
        let map = try schema.json(
            from: [0x52, 0x05, 0x0A, 0x01, 0x6B, 0x10, 0x01, 0x52, 0x05, 0x0A, 0x01, 0x6B, 0x10, 0x02], type: type)
        #expect(map == ["counts": ["k": 2]])
        // Map entries missing their key or value read as the defaults.
        #expect(try schema.json(from: [0x52, 0x00], type: type) == ["counts": ["": 0]])
        // Unknown fields are dropped (JSON has no place for them).
        #expect(try schema.json(from: [0xF8, 0x07, 0x01, 0x0A, 0x00], type: type) == ["scalars": [:]])
    }

    @Test("a proto2 closed enum drops numbers it does not define; proto2 fields keep presence")
    func proto2() throws {
        let json = try schema.json(from: [0x12, 0x00, 0x38, 0x09, 0x08, 0x00], type: "kakapo.legacy.Old")
        #expect(json == ["number": 0, "id": ""])
        let written = try schema.message(from: ["number": 0, "id": "", "kind": "FIRST"], type: "kakapo.legacy.Old")
        #expect(written == [0x08, 0x00, 0x12, 0x00, 0x38, 0x01])
    }

    @Test("reversible JSON is JSON that writes back the same bytes; other messages are an error that says why")
    func reversible() throws {
        for golden in ProtoFixtures.goldens where golden.sameOrder {
            #expect(
                try schema.reversibleJSON(from: golden.bytes, type: golden.type)
                    == schema.json(from: golden.bytes, type: golden.type))
        }
        let type = "kakapo.test.Everything"
        // An unknown field, a default written out, fields out of order, a varint longer than it needs.
        for bytes: [UInt8] in [
            [0xF8, 0x07, 0x01], [0xB0, 0x01, 0x00], [0xB0, 0x01, 0x01, 0x0A, 0x00], [0xB0, 0x01, 0x81, 0x00],
        ] {
            let error = #expect(throws: ProtoError.self) { try schema.reversibleJSON(from: bytes, type: type) }
            #expect(error?.message.contains("would write different bytes") == true)
            #expect(throws: Never.self) { try schema.json(from: bytes, type: type) }
        }
    }
}
