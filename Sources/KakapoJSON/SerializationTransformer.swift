/// Wraps a value and renames every key of its JSON, nested ones included. Transformers nest: the inner
/// one applies first.
public protocol SerializationTransformer: CustomSerializable {
    associatedtype Wrapped
    var wrapped: Wrapped { get }
    /// The new name of `key`.
    func transform(key: String) -> String
}

extension SerializationTransformer {
    public func customSerialized(transformingKeys keyTransformer: KeyTransformer?) -> JSONValue? {
        let combined: KeyTransformer = { key in
            let renamed = self.transform(key: key)
            return keyTransformer?(renamed) ?? renamed
        }
        return KakapoSerialization.serialize(wrapped, keyTransformer: combined)
    }
}

/// Renames keys from camelCase to snake_case: `userNameOfALuckyUser` -> `user_name_of_a_lucky_user`.
/// Every capital letter after the first character starts a new word, as in the original Kakapo.
public struct SnakecaseTransformer<Wrapped>: SerializationTransformer {
    public let wrapped: Wrapped

    public init(_ wrapped: Wrapped) { self.wrapped = wrapped }

    public func transform(key: String) -> String {
        var result = ""
        result.reserveCapacity(key.utf8.count + 4)
        for (offset, character) in key.enumerated() {
            if character.isUppercase {
                if offset > 0 { result.append("_") }
                result.append(contentsOf: character.lowercased())
            } else {
                result.append(character)
            }
        }
        return result
    }
}

extension SnakecaseTransformer: Sendable where Wrapped: Sendable {}

/// Renames keys with any function: `KeyRenamer(value) { $0.uppercased() }`.
public struct KeyRenamer<Wrapped>: SerializationTransformer {
    public let wrapped: Wrapped
    private let rename: @Sendable (String) -> String

    public init(_ wrapped: Wrapped, rename: @escaping @Sendable (String) -> String) {
        self.wrapped = wrapped
        self.rename = rename
    }

    public func transform(key: String) -> String { rename(key) }
}
