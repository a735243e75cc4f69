import Foundation
import KakapoJSON
import KakapoProtobuf
import Testing

/// The committed fixtures: test.desc (test.proto and legacy.proto with their imports) and goldens.json
/// (bytes and JSON from Python protobuf), both written by tools/protobuf-goldens.py.
enum ProtoFixtures {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
        "Fixtures")

    static var descriptorPath: String { directory.appendingPathComponent("test.desc").path }

    static func schema() throws -> ProtoSchema {
        try ProtoSchema(contentsOfFile: descriptorPath)
    }

    static func descriptorBytes() throws -> [UInt8] {
        Array(try Data(contentsOf: URL(fileURLWithPath: descriptorPath)))
    }

    struct Golden: CustomTestStringConvertible, Sendable {
        let name: String
        let type: String
        let bytes: [UInt8]
        let json: JSONValue
        /// False when a map with several entries is inside: Python writes map entries in an order of its
        /// own, so bytes made from the JSON may order them differently.
        let sameOrder: Bool
        var testDescription: String { name }
    }

    static let goldens: [Golden] = {
        guard let data = try? Data(contentsOf: directory.appendingPathComponent("goldens.json")),
            let parsed = try? JSONParser.parse(Array(data)), let list = parsed.arrayValue
        else { return [] }
        return list.compactMap { entry in
            guard let name = entry["name"]?.stringValue, let type = entry["type"]?.stringValue,
                let base64 = entry["base64"]?.stringValue, let bytes = Data(base64Encoded: base64),
                let json = entry["json"]
            else { return nil }
            let sameOrder = entry["sameOrder"]?.boolValue ?? true
            return Golden(name: name, type: type, bytes: Array(bytes), json: json, sameOrder: sameOrder)
        }
    }()

    /// JSON equality as the oracle means it: key order and number spelling aside, and floats compared as
    /// 32-bit floats too (Python writes a float's shortest 32-bit digits, "-1.4013e-45" for Swift's "-1e-45").
    static func sameJSON(_ a: JSONValue, _ b: JSONValue) -> Bool {
        switch (a, b) {
        case (.number(let x), .number(let y)):
            if x.isEquivalent(to: y) { return true }
            guard let dx = Double(x.literal), let dy = Double(y.literal) else { return false }
            return dx == dy || Float(dx) == Float(dy)
        case (.array(let x), .array(let y)):
            return x.count == y.count && zip(x, y).allSatisfy { sameJSON($0, $1) }
        case (.object(let x), .object(let y)):
            guard x.count == y.count else { return false }
            return x.allSatisfy { member in y[member.key].map { sameJSON(member.value, $0) } ?? false }
        default:
            return a == b
        }
    }

    static func text(_ json: JSONValue) -> String { JSONWriter().string(json) }

    static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
    }
}
