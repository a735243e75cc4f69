import Foundation
import KakapoJSON
import KakapoProtobuf
import Testing

@Suite("ProtoSchema reading descriptor sets")
struct ProtoDescriptorSetTests {
    @Test("lists each service's methods with their types and streaming")
    func methods() throws {
        let schema = try ProtoFixtures.schema()
        let hello = try #require(schema.method(path: "/kakapo.test.Greeter/SayHello"))
        #expect(hello.service == "kakapo.test.Greeter")
        #expect(hello.name == "SayHello")
        #expect(hello.inputType == "kakapo.test.HelloRequest")
        #expect(hello.outputType == "kakapo.test.HelloReply")
        #expect(!hello.clientStreaming && !hello.serverStreaming)
        let streams = try #require(schema.method(path: "/kakapo.test.Greeter/SayHellos"))
        #expect(!streams.clientStreaming && streams.serverStreaming)
        let collect = try #require(schema.method(path: "/kakapo.test.Greeter/CollectHellos"))
        #expect(collect.clientStreaming && !collect.serverStreaming)
        let chat = try #require(schema.method(path: "/kakapo.test.Greeter/Chat"))
        #expect(chat.clientStreaming && chat.serverStreaming)
        let legacy = try #require(schema.method(path: "/kakapo.test.Legacy/Get"))
        #expect(legacy.inputType == "kakapo.legacy.Old")
        #expect(legacy.outputType == "google.protobuf.Empty")
        #expect(
            schema.methods.map(\.path) == [
                "/kakapo.test.Greeter/Chat", "/kakapo.test.Greeter/CollectHellos", "/kakapo.test.Greeter/SayHello",
                "/kakapo.test.Greeter/SayHellos", "/kakapo.test.Legacy/Get",
            ])
    }

    @Test("answers nil for a path that names no method")
    func unknownPaths() throws {
        let schema = try ProtoFixtures.schema()
        for path in [
            "/kakapo.test.Greeter/Nope", "/kakapo.test.Nope/SayHello", "kakapo.test.Greeter/SayHello", "/", "",
        ] {
            #expect(schema.method(path: path) == nil, "\(path)")
        }
    }

    @Test("knows nested message types by their dotted names, with or without a leading dot")
    func nestedTypes() throws {
        let schema = try ProtoFixtures.schema()
        #expect(schema.hasMessageType("kakapo.test.Everything.Inner"))
        #expect(schema.hasMessageType(".kakapo.test.Everything.Inner"))
        #expect(!schema.hasMessageType("kakapo.test.Inner"))
        let json = try schema.json(from: [0x0A, 0x01, 0x78, 0x10, 0x02], type: ".kakapo.test.Everything.Inner")
        #expect(json == ["label": "x", "weight": 2])
    }

    @Test("a set made without --include_imports still writes the well-known types, and names a missing type")
    func withoutImports() throws {
        let schema = try ProtoSchema(
            contentsOfFile: ProtoFixtures.directory.appendingPathComponent("test-no-imports.desc").path)
        let when = try schema.message(from: ["when": "2023-11-14T22:13:20.123Z"], type: "kakapo.test.WellKnown")
        #expect(try schema.json(from: when, type: "kakapo.test.WellKnown") == ["when": "2023-11-14T22:13:20.123Z"])
        let legacy = try #require(schema.method(path: "/kakapo.test.Legacy/Get"))
        #expect(legacy.inputType == "kakapo.legacy.Old")
        let error = #expect(throws: ProtoError.self) { try schema.json(from: [], type: legacy.inputType) }
        #expect(error?.message.contains("kakapo.legacy.Old") == true)
        #expect(error?.message.contains("--include_imports") == true)
    }

    @Test("an unknown message type is an error that names it")
    func unknownType() throws {
        let schema = try ProtoFixtures.schema()
        let error = #expect(throws: ProtoError.self) { try schema.json(from: [], type: "kakapo.test.Nope") }
        #expect(error?.message.contains("kakapo.test.Nope") == true)
        let enumError = #expect(throws: ProtoError.self) { try schema.message(from: [:], type: "kakapo.test.Color") }
        #expect(enumError?.message.contains("enum") == true)
    }

    @Test("a missing or unreadable file is an error that names it")
    func missingFile() {
        let error = #expect(throws: ProtoError.self) { try ProtoSchema(contentsOfFile: "/nonexistent/x.desc") }
        #expect(error?.message.hasPrefix("/nonexistent/x.desc: ") == true)
    }

    @Test("a descriptor set cut short says where")
    func truncatedSet() throws {
        let bytes = try ProtoFixtures.descriptorBytes()
        for length in stride(from: 1, to: bytes.count, by: 97) {
            // Only whole files survive a cut; anything else must be an error or a smaller schema, never a trap.
            do {
                _ = try ProtoSchema(descriptorSet: Array(bytes[..<length]))
            } catch {
                #expect(!error.message.isEmpty)
            }
        }
        let error = #expect(throws: ProtoError.self) {
            try ProtoSchema(descriptorSet: Array(bytes[..<(bytes.count - 3)]))
        }
        #expect(error?.message.hasPrefix("descriptor set: ") == true, "\(error?.message ?? "")")
    }

    @Test(
        "a corrupt field descriptor is named with its file, message and field",
        arguments: [
            (Descriptor.field(name: "id", number: 1, label: 9, type: 5), "field \"id\": a label of 9"),
            (Descriptor.field(name: "id", number: 0, label: 1, type: 5), "field \"id\": field number 0"),
            (Descriptor.field(name: "id", number: 536_870_912, label: 1, type: 5), "field number 536870912"),
            (Descriptor.field(name: "id", number: 1, label: 1, type: 42), "a type of 42"),
            (Descriptor.field(name: "id", number: 1, label: 1, type: 11), "without type_name"),
            (Descriptor.field(name: "", number: 1, label: 1, type: 5), "not an identifier"),
        ])
    func corruptField(field: [UInt8], expected: String) {
        let set = Descriptor.set(file: "bad.proto", package: "bad", message: "Msg", fields: [field])
        let error = #expect(throws: ProtoError.self) { try ProtoSchema(descriptorSet: set) }
        let message = error?.message ?? ""
        #expect(message.contains("file \"bad.proto\": message \"bad.Msg\""), "\(message)")
        #expect(message.contains(expected), "\(message)")
    }

    @Test("two fields with one number, and a type defined twice, are errors")
    func duplicates() {
        let twice = Descriptor.set(
            file: "a.proto", package: "p", message: "M",
            fields: [
                Descriptor.field(name: "a", number: 1, label: 1, type: 5),
                Descriptor.field(name: "b", number: 1, label: 1, type: 5),
            ])
        let error = #expect(throws: ProtoError.self) { try ProtoSchema(descriptorSet: twice) }
        #expect(error?.message.contains("field number 1 used twice") == true, "\(error?.message ?? "")")
        let first = Descriptor.set(file: "a.proto", package: "p", message: "M", fields: [])
        let second = Descriptor.set(file: "b.proto", package: "p", message: "M", fields: [])
        let again = #expect(throws: ProtoError.self) { try ProtoSchema(descriptorSet: first + second) }
        #expect(again?.message.contains("defined twice (also in a.proto)") == true, "\(again?.message ?? "")")
        // The same file twice (two sets concatenated) is fine.
        #expect(throws: Never.self) { try ProtoSchema(descriptorSet: first + first) }
    }

    @Test("message types nested past 100 levels are refused, not recursed into")
    func deepDescriptor() {
        var message = Descriptor.lengthDelimited(1, Array("M".utf8))
        for _ in 0..<10_000 {
            message = Descriptor.lengthDelimited(1, Array("M".utf8)) + Descriptor.lengthDelimited(3, message)
        }
        let file = Descriptor.lengthDelimited(1, Array("deep.proto".utf8)) + Descriptor.lengthDelimited(4, message)
        let error = #expect(throws: ProtoError.self) {
            try ProtoSchema(descriptorSet: Descriptor.lengthDelimited(1, file))
        }
        #expect(error?.message.contains("nested deeper than 100 levels") == true, "\(error?.message.suffix(200) ?? "")")
    }

    @Test("mutated descriptor sets never trap, and schemas read from them never trap on the goldens")
    func fuzz() throws {
        let original = try ProtoFixtures.descriptorBytes()
        var random = SplitMix64(seed: 0x0D35C)
        var loaded = 0
        for _ in 0..<600 {
            var bytes = original
            for _ in 0..<(1 + Int(random.next() % 3)) {
                bytes[Int(random.next() % UInt64(bytes.count))] = UInt8(truncatingIfNeeded: random.next())
            }
            guard let schema = try? ProtoSchema(descriptorSet: bytes) else { continue }
            loaded += 1
            for golden in ProtoFixtures.goldens {
                guard let json = try? schema.json(from: golden.bytes, type: golden.type) else { continue }
                _ = try? schema.message(from: json, type: golden.type)
            }
        }
        #expect(loaded > 100)
    }

    @Test("a file entry that is not length-delimited, and bytes that are not a descriptor set, are errors")
    func notADescriptorSet() throws {
        #expect(throws: ProtoError.self) { try ProtoSchema(descriptorSet: [0x08, 0x01]) }
        #expect(throws: ProtoError.self) { try ProtoSchema(descriptorSet: Array("{\"json\": true}".utf8)) }
        #expect(throws: ProtoError.self) { try ProtoSchema(descriptorSet: [0x0A, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F]) }
        // An empty set is a schema without types or methods.
        #expect(try ProtoSchema(descriptorSet: []).methods.isEmpty)
    }
}

/// Descriptor bytes written by hand, for descriptors protoc would never write.
enum Descriptor {
    static func varint(_ value: UInt64) -> [UInt8] {
        var value = value
        var bytes: [UInt8] = []
        while value >= 0x80 {
            bytes.append(UInt8(value & 0x7F) | 0x80)
            value >>= 7
        }
        return bytes + [UInt8(value)]
    }

    static func lengthDelimited(_ number: UInt64, _ payload: [UInt8]) -> [UInt8] {
        varint(number << 3 | 2) + varint(UInt64(payload.count)) + payload
    }

    static func varintField(_ number: UInt64, _ value: UInt64) -> [UInt8] {
        varint(number << 3) + varint(value)
    }

    static func field(name: String, number: UInt64, label: UInt64, type: UInt64) -> [UInt8] {
        lengthDelimited(1, Array(name.utf8)) + varintField(3, number) + varintField(4, label) + varintField(5, type)
    }

    static func set(file: String, package: String, message: String, fields: [[UInt8]]) -> [UInt8] {
        let messageBytes = lengthDelimited(1, Array(message.utf8)) + fields.flatMap { lengthDelimited(2, $0) }
        let fileBytes =
            lengthDelimited(1, Array(file.utf8)) + lengthDelimited(2, Array(package.utf8))
            + lengthDelimited(4, messageBytes) + lengthDelimited(12, Array("proto3".utf8))
        return lengthDelimited(1, fileBytes)
    }
}
