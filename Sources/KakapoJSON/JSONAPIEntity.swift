/// A resource of a JSON:API document (jsonapi.org, v1.1): an `id`, a `type`, and stored properties that
/// become attributes or, when they hold other entities, relationships.
///
/// ```swift
/// struct Dog: JSONAPIEntity { let id: String; let name: String }
/// struct User: JSONAPIEntity { let id: String; let name: String; let dog: Dog?; let friends: [User] }
/// ```
public protocol JSONAPIEntity: Serializable {
    var id: String { get }
    /// The resource type; defaults to the lowercased type name (`User` -> `user`).
    static var type: String { get }
}

extension JSONAPIEntity {
    public static var type: String { String(describing: Self.self).lowercased() }
}

/// An entity with links of its own (`"links": {"self": ...}` on the resource object).
public protocol JSONAPILinkedEntity: JSONAPIEntity {
    var links: [String: JSONAPILink]? { get }
}

/// A JSON:API link: a plain URL, or an object with `href` and `meta`.
public enum JSONAPILink: CustomSerializable, Hashable, Sendable {
    case simple(String)
    case object(href: String, meta: JSONValue?)

    public func customSerialized(transformingKeys keyTransformer: KeyTransformer?) -> JSONValue? {
        switch self {
        case .simple(let href):
            return .string(href)
        case .object(let href, let meta):
            var object: JSONObject = ["href": .string(href)]
            if let meta { object["meta"] = meta }
            return .object(object)
        }
    }
}

/// Lets the serializer see the declared type inside an optional, even when it is nil.
protocol OptionalReflecting {
    static var wrappedType: Any.Type { get }
    var wrappedValue: Any? { get }
}

extension Optional: OptionalReflecting {
    static var wrappedType: Any.Type { Wrapped.self }
    var wrappedValue: Any? {
        guard case .some(let value) = self else { return nil }
        return value
    }
}

/// Lets the serializer see inside a `PropertyPolicy`.
protocol PropertyPolicyReflecting {
    static var wrappedType: Any.Type { get }
    var policyState: PropertyPolicyState { get }
}

enum PropertyPolicyState {
    case none
    case null
    case some(Any)
}

extension PropertyPolicy: PropertyPolicyReflecting {
    static var wrappedType: Any.Type { Wrapped.self }
    var policyState: PropertyPolicyState {
        switch self {
        case .none: return .none
        case .null: return .null
        case .some(let value): return .some(value)
        }
    }
}
