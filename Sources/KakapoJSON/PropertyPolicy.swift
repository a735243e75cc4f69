/// A property that can be left out, written as `null`, or written with a value — the three cases a
/// plain optional cannot tell apart.
///
/// ```swift
/// struct Patch: Serializable { let name: PropertyPolicy<String>; let email: PropertyPolicy<String> }
/// Patch(name: .some("Ada"), email: .null).serialized()   // {"name":"Ada","email":null}
/// ```
public indirect enum PropertyPolicy<Wrapped>: CustomSerializable {
    /// Left out of the JSON.
    case none
    /// Written as `null`.
    case null
    /// Written as the wrapped value.
    case some(Wrapped)

    public func customSerialized(transformingKeys keyTransformer: KeyTransformer?) -> JSONValue? {
        switch self {
        case .none: return nil
        case .null: return .null
        case .some(let value): return KakapoSerialization.serialize(value, keyTransformer: keyTransformer) ?? .null
        }
    }
}

extension PropertyPolicy: Sendable where Wrapped: Sendable {}

extension PropertyPolicy: Encodable where Wrapped: Encodable {
    /// With encoders other than Kakapo's own, `.none` is written as `null`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .none, .null: try container.encodeNil()
        case .some(let value): try container.encode(value)
        }
    }
}
