import KakapoJSON
import KakapoProtobuf
import Testing

@Suite("ProtoSchema against Python protobuf's goldens")
struct ProtoSchemaGoldenTests {
    @Test("the fixtures hold every golden the generator writes")
    func goldensLoad() {
        #expect(ProtoFixtures.goldens.count >= 16)
    }

    @Test("decodes each golden message to the JSON json_format.MessageToDict wrote", arguments: ProtoFixtures.goldens)
    func decodesToOracleJSON(golden: ProtoFixtures.Golden) throws {
        let schema = try ProtoFixtures.schema()
        let json = try schema.json(from: golden.bytes, type: golden.type)
        #expect(
            ProtoFixtures.sameJSON(json, golden.json),
            "\(ProtoFixtures.text(json))\nexpected\n\(ProtoFixtures.text(golden.json))")
    }

    @Test(
        "encodes each golden's JSON to the bytes SerializeToString wrote (map entries aside)",
        arguments: ProtoFixtures.goldens)
    func encodesToOracleBytes(golden: ProtoFixtures.Golden) throws {
        let schema = try ProtoFixtures.schema()
        let bytes = try schema.message(from: golden.json, type: golden.type)
        if golden.sameOrder {
            #expect(ProtoFixtures.hex(bytes) == ProtoFixtures.hex(golden.bytes))
        } else {
            #expect(bytes.count == golden.bytes.count)
        }
        // Whatever the order of map entries, the bytes mean what the oracle's do.
        let decoded = try schema.json(from: bytes, type: golden.type)
        #expect(ProtoFixtures.sameJSON(decoded, golden.json), "\(ProtoFixtures.text(decoded))")
    }

    @Test("JSON it writes reads back to the same bytes", arguments: ProtoFixtures.goldens)
    func roundTrips(golden: ProtoFixtures.Golden) throws {
        let schema = try ProtoFixtures.schema()
        let json = try schema.json(from: golden.bytes, type: golden.type)
        let bytes = try schema.message(from: json, type: golden.type)
        #expect(ProtoFixtures.hex(bytes) == ProtoFixtures.hex(golden.bytes))
        let again = try schema.json(from: bytes, type: golden.type)
        #expect(again == json)
    }
}
