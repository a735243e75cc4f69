import Foundation

/// Renames a key during serialization (`userName` -> `user_name`).
public typealias KeyTransformer = (String) -> String

/// A value that can be turned into JSON.
///
/// The default implementation needs no code: an `Encodable` type serializes through its `encode(to:)`
/// (so `CodingKeys` apply), and any other type by reflection over its stored properties, in declaration
/// order. `nil` optionals are left out; `PropertyPolicy` adds an explicit `null`.
///
/// ```swift
/// struct User: Serializable { let id: String; let nickName: String? }
/// User(id: "1", nickName: nil).serialized()   // {"id":"1"}
/// ```
public protocol Serializable {
    /// The JSON of this value, with every object key passed through `transformingKeys`; nil leaves the
    /// value out of its parent.
    func serialized(transformingKeys keyTransformer: KeyTransformer?) -> JSONValue?
}

/// A `Serializable` type that builds its own JSON instead of the reflection default.
public protocol CustomSerializable: Serializable {
    /// The JSON of this value; `keyTransformer` must be applied to the keys it produces.
    func customSerialized(transformingKeys keyTransformer: KeyTransformer?) -> JSONValue?
}

extension CustomSerializable {
    public func serialized(transformingKeys keyTransformer: KeyTransformer?) -> JSONValue? {
        customSerialized(transformingKeys: keyTransformer)
    }
}

extension Serializable {
    public func serialized(transformingKeys keyTransformer: KeyTransformer?) -> JSONValue? {
        KakapoSerialization.reflect(self, keyTransformer: keyTransformer)
    }

    /// The JSON of this value with keys as they are.
    public func serialized() -> JSONValue? { serialized(transformingKeys: nil) }

    /// The value as UTF-8 JSON bytes (compact), or nil when it serializes to nothing.
    public func toData(layout: JSONWriter.Layout = .compact) -> [UInt8]? {
        serialized().map { JSONWriter(layout: layout).write($0) }
    }
}

/// Serializes values of any type: `Serializable` first, then `Encodable`, then reflection.
public enum KakapoSerialization {
    /// The JSON of any value; nil for a nil optional (which its parent leaves out).
    public static func serialize(_ value: Any, keyTransformer: KeyTransformer? = nil) -> JSONValue? {
        if let serializable = value as? any Serializable {
            return serializable.serialized(transformingKeys: keyTransformer)
        }
        return reflect(value, keyTransformer: keyTransformer)
    }

    /// The default serialization of a value that has no serialization of its own.
    static func reflect(_ value: Any, keyTransformer: KeyTransformer?) -> JSONValue? {
        if let encodable = value as? any Encodable {
            do {
                return try JSONValueEncoder(keyTransformer: keyTransformer).encode(encodable)
            } catch {
                // A value whose encode(to:) throws falls back to reflection, which cannot fail.
            }
        }
        let mirror = Mirror(reflecting: value)
        switch mirror.displayStyle {
        case .optional:
            guard let wrapped = mirror.children.first?.value else { return nil }
            return serialize(wrapped, keyTransformer: keyTransformer)
        case .collection, .set:
            return .array(mirror.children.compactMap { serialize($0.value, keyTransformer: keyTransformer) })
        case .dictionary:
            var object = JSONObject()
            for child in mirror.children {
                let pair = Array(Mirror(reflecting: child.value).children)
                guard pair.count == 2, let member = serialize(pair[1].value, keyTransformer: keyTransformer) else {
                    continue
                }
                let key = "\(pair[0].value)"
                object.append(key: keyTransformer?(key) ?? key, value: member)
            }
            return .object(object)
        case .enum where mirror.children.isEmpty:
            return .string("\(value)")
        case .struct, .class, .tuple, .enum:
            var object = JSONObject()
            var current: Mirror? = mirror
            var mirrors: [Mirror] = []
            while let level = current {
                mirrors.insert(level, at: 0)  // superclass properties first
                current = level.superclassMirror
            }
            for level in mirrors {
                for (offset, child) in level.children.enumerated() {
                    let label = child.label ?? "\(offset)"
                    guard let member = serialize(child.value, keyTransformer: keyTransformer) else { continue }
                    object[keyTransformer?(label) ?? label] = member
                }
            }
            return .object(object)
        default:
            return .string("\(value)")
        }
    }
}
