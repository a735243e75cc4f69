import Foundation

/// Encodes `Encodable` values straight into a `JSONValue`, keeping keys in the order `encode(to:)`
/// writes them (declaration order for synthesized conformances), so output is deterministic without
/// sorting. `Date` becomes an ISO 8601 string, `URL` its absolute string, `Data` base64.
struct JSONValueEncoder {
    let keyTransformer: KeyTransformer?

    /// nil when the value chose to be left out (`PropertyPolicy.none`).
    func encode(_ value: any Encodable) throws -> JSONValue? {
        let box = EncodingBox()
        try box.encode(value, codingPath: [], keyTransformer: keyTransformer)
        return box.result
    }
}

/// One node of the value being built.
final class EncodingBox {
    enum Storage {
        case empty
        case value(JSONValue)
        case omitted
        case object([(String, EncodingBox)])
        case array([EncodingBox])
    }

    var storage: Storage = .empty

    var result: JSONValue? {
        switch storage {
        case .empty: return .object(JSONObject())
        case .value(let value): return value
        case .omitted: return nil
        case .object(let members):
            var object = JSONObject()
            for (key, box) in members {
                if let value = box.result { object.append(key: key, value: value) }
            }
            return .object(object)
        case .array(let elements):
            return .array(elements.map { $0.result ?? .null })
        }
    }

    func encode(_ value: any Encodable, codingPath: [any CodingKey], keyTransformer: KeyTransformer?) throws {
        switch value {
        case let custom as any CustomSerializable:
            if let json = custom.serialized(transformingKeys: keyTransformer) {
                storage = .value(json)
            } else {
                storage = .omitted
            }
        case let date as Date:
            storage = .value(.string(date.formatted(.iso8601)))
        case let url as URL:
            storage = .value(.string(url.absoluteString))
        case let data as Data:
            storage = .value(.string(data.base64EncodedString()))
        case let decimal as Decimal:
            storage = .value(.number(JSONNumber(literal: "\(decimal)")))
        default:
            try value.encode(to: BoxEncoder(box: self, codingPath: codingPath, keyTransformer: keyTransformer))
        }
    }

    func member(_ key: String) -> EncodingBox {
        let box = EncodingBox()
        if case .object(var members) = storage {
            if let index = members.firstIndex(where: { $0.0 == key }) {
                members[index].1 = box
            } else {
                members.append((key, box))
            }
            storage = .object(members)
        } else {
            storage = .object([(key, box)])
        }
        return box
    }

    func element() -> EncodingBox {
        let box = EncodingBox()
        if case .array(var elements) = storage {
            elements.append(box)
            storage = .array(elements)
        } else {
            storage = .array([box])
        }
        return box
    }
}

struct BoxEncoder: Encoder {
    let box: EncodingBox
    let codingPath: [any CodingKey]
    let keyTransformer: KeyTransformer?
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        if case .object = box.storage {} else { box.storage = .object([]) }
        return KeyedEncodingContainer(
            KeyedBoxContainer<Key>(box: box, codingPath: codingPath, keyTransformer: keyTransformer))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        if case .array = box.storage {} else { box.storage = .array([]) }
        return UnkeyedBoxContainer(box: box, codingPath: codingPath, keyTransformer: keyTransformer)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        SingleBoxContainer(box: box, codingPath: codingPath, keyTransformer: keyTransformer)
    }
}

struct KeyedBoxContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let box: EncodingBox
    let codingPath: [any CodingKey]
    let keyTransformer: KeyTransformer?

    private func name(_ key: Key) -> String { keyTransformer?(key.stringValue) ?? key.stringValue }

    mutating func encodeNil(forKey key: Key) throws { box.member(name(key)).storage = .value(.null) }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        try box.member(name(key)).encode(value, codingPath: codingPath + [key], keyTransformer: keyTransformer)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key)
        -> KeyedEncodingContainer<NestedKey>
    {
        let child = box.member(name(key))
        return BoxEncoder(box: child, codingPath: codingPath + [key], keyTransformer: keyTransformer)
            .container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        BoxEncoder(box: box.member(name(key)), codingPath: codingPath + [key], keyTransformer: keyTransformer)
            .unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder {
        BoxEncoder(box: box.member("super"), codingPath: codingPath, keyTransformer: keyTransformer)
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        BoxEncoder(box: box.member(name(key)), codingPath: codingPath + [key], keyTransformer: keyTransformer)
    }
}

struct UnkeyedBoxContainer: UnkeyedEncodingContainer {
    let box: EncodingBox
    let codingPath: [any CodingKey]
    let keyTransformer: KeyTransformer?

    var count: Int {
        if case .array(let elements) = box.storage { return elements.count }
        return 0
    }

    mutating func encodeNil() throws { box.element().storage = .value(.null) }

    mutating func encode<T: Encodable>(_ value: T) throws {
        try box.element().encode(value, codingPath: codingPath, keyTransformer: keyTransformer)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type)
        -> KeyedEncodingContainer<NestedKey>
    {
        BoxEncoder(box: box.element(), codingPath: codingPath, keyTransformer: keyTransformer).container(
            keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        BoxEncoder(box: box.element(), codingPath: codingPath, keyTransformer: keyTransformer).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder {
        BoxEncoder(box: box.element(), codingPath: codingPath, keyTransformer: keyTransformer)
    }
}

struct SingleBoxContainer: SingleValueEncodingContainer {
    let box: EncodingBox
    let codingPath: [any CodingKey]
    let keyTransformer: KeyTransformer?

    mutating func encodeNil() throws { box.storage = .value(.null) }
    mutating func encode(_ value: Bool) throws { box.storage = .value(.bool(value)) }
    mutating func encode(_ value: String) throws { box.storage = .value(.string(value)) }
    mutating func encode(_ value: Double) throws { box.storage = .value(.number(JSONNumber(value))) }
    mutating func encode(_ value: Float) throws { box.storage = .value(.number(JSONNumber(Double(value)))) }
    mutating func encode(_ value: Int) throws { box.storage = .value(.number(JSONNumber(value))) }
    mutating func encode(_ value: Int8) throws { box.storage = .value(.number(JSONNumber(Int(value)))) }
    mutating func encode(_ value: Int16) throws { box.storage = .value(.number(JSONNumber(Int(value)))) }
    mutating func encode(_ value: Int32) throws { box.storage = .value(.number(JSONNumber(Int(value)))) }
    mutating func encode(_ value: Int64) throws { box.storage = .value(.number(JSONNumber(literal: String(value)))) }
    mutating func encode(_ value: UInt) throws { box.storage = .value(.number(JSONNumber(literal: String(value)))) }
    mutating func encode(_ value: UInt8) throws { box.storage = .value(.number(JSONNumber(Int(value)))) }
    mutating func encode(_ value: UInt16) throws { box.storage = .value(.number(JSONNumber(Int(value)))) }
    mutating func encode(_ value: UInt32) throws { box.storage = .value(.number(JSONNumber(Int(value)))) }
    mutating func encode(_ value: UInt64) throws { box.storage = .value(.number(JSONNumber(literal: String(value)))) }

    mutating func encode<T: Encodable>(_ value: T) throws {
        try box.encode(value, codingPath: codingPath, keyTransformer: keyTransformer)
    }
}
