import KakapoJSON

/// An entity the `Store` can keep: it has an id, and it can be made from one (which is how
/// `Store.create(_:number:)` fills a store with generated data).
///
/// ```swift
/// struct User: Storable { let id: String; let name: String
///     init(id: String, store: Store) { self.id = id; self.name = "User \(id)" } }
/// ```
public protocol Storable: Serializable, Sendable {
    var id: String { get }
    init(id: String, store: Store)
}
