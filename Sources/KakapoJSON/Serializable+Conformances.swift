import Foundation

extension JSONValue: CustomSerializable {
    /// A JSON value serializes as itself, with object keys transformed.
    public func customSerialized(transformingKeys keyTransformer: KeyTransformer?) -> JSONValue? {
        guard let keyTransformer else { return self }
        switch self {
        case .object(let object):
            return .object(
                JSONObject(
                    object.members.map {
                        (keyTransformer($0.key), $0.value.customSerialized(transformingKeys: keyTransformer) ?? .null)
                    }))
        case .array(let elements):
            return .array(elements.map { $0.customSerialized(transformingKeys: keyTransformer) ?? .null })
        default:
            return self
        }
    }
}

extension String: CustomSerializable {
    public func customSerialized(transformingKeys keyTransformer: KeyTransformer?) -> JSONValue? { .string(self) }
}

extension Bool: CustomSerializable {
    public func customSerialized(transformingKeys keyTransformer: KeyTransformer?) -> JSONValue? { .bool(self) }
}

extension Int: CustomSerializable {
    public func customSerialized(transformingKeys keyTransformer: KeyTransformer?) -> JSONValue? {
        .number(JSONNumber(self))
    }
}

extension Int64: CustomSerializable {
    public func customSerialized(transformingKeys keyTransformer: KeyTransformer?) -> JSONValue? {
        .number(JSONNumber(literal: String(self)))
    }
}

extension Int32: CustomSerializable {
    public func customSerialized(transformingKeys keyTransformer: KeyTransformer?) -> JSONValue? {
        .number(JSONNumber(Int(self)))
    }
}

extension UInt: CustomSerializable {
    public func customSerialized(transformingKeys keyTransformer: KeyTransformer?) -> JSONValue? {
        .number(JSONNumber(literal: String(self)))
    }
}

extension Double: CustomSerializable {
    public func customSerialized(transformingKeys keyTransformer: KeyTransformer?) -> JSONValue? {
        .number(JSONNumber(self))
    }
}

extension Float: CustomSerializable {
    public func customSerialized(transformingKeys keyTransformer: KeyTransformer?) -> JSONValue? {
        .number(JSONNumber(Double(self)))
    }
}

extension Optional: Serializable, CustomSerializable {
    /// nil serializes to nothing, so a property holding it is left out.
    public func customSerialized(transformingKeys keyTransformer: KeyTransformer?) -> JSONValue? {
        guard case .some(let wrapped) = self else { return nil }
        return KakapoSerialization.serialize(wrapped, keyTransformer: keyTransformer)
    }
}

extension Array: Serializable, CustomSerializable {
    /// Elements that serialize to nothing (nil) are left out.
    public func customSerialized(transformingKeys keyTransformer: KeyTransformer?) -> JSONValue? {
        .array(compactMap { KakapoSerialization.serialize($0, keyTransformer: keyTransformer) })
    }
}

extension Dictionary: Serializable, CustomSerializable {
    /// Keys become strings; members are written in ascending key order, so output is deterministic.
    public func customSerialized(transformingKeys keyTransformer: KeyTransformer?) -> JSONValue? {
        var members: [(String, JSONValue)] = []
        for (key, value) in self {
            guard let member = KakapoSerialization.serialize(value, keyTransformer: keyTransformer) else { continue }
            let name = "\(key)"
            members.append((keyTransformer?(name) ?? name, member))
        }
        members.sort { $0.0 < $1.0 }
        return .object(JSONObject(members))
    }
}
