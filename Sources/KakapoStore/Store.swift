import Foundation
import KakapoJSON
import Synchronization

/// Entities by type, in insertion order, with one id counter shared by every type ("0", "1", ...), as
/// in the original Kakapo. Safe to use from many requests at once; closures given to `insert` and
/// `filter` run outside the lock, so they may use the store themselves.
public final class Store: Sendable {
    struct Table {
        var order: [String] = []
        var byID: [String: any Storable] = [:]

        mutating func put(_ entity: any Storable) {
            if byID.updateValue(entity, forKey: entity.id) == nil { order.append(entity.id) }
        }

        mutating func remove(_ id: String) -> Bool {
            guard byID.removeValue(forKey: id) != nil else { return false }
            order.removeAll { $0 == id }
            return true
        }

        var all: [any Storable] { order.compactMap { byID[$0] } }
    }

    struct State {
        var nextID = 0
        var tables: [ObjectIdentifier: Table] = [:]
        var names: [ObjectIdentifier: String] = [:]
        /// JSON documents by collection name (resources declared in a routes file), sharing `nextID`.
        var collections: [String: DocumentTable] = [:]

        /// The next id from the shared counter that `isTaken` does not refuse.
        mutating func freshID(unless isTaken: (String) -> Bool = { _ in false }) -> String {
            while true {
                let id = String(nextID)
                nextID += 1
                if !isTaken(id) { return id }
            }
        }
    }

    let state = Mutex(State())

    public init() {}

    private func reserveIDs(_ count: Int) -> [String] {
        state.withLock { state in
            let first = state.nextID
            state.nextID += count
            return (first..<first + count).map(String.init)
        }
    }

    private func put<T: Storable>(_ entities: [T]) {
        state.withLock { state in
            let key = ObjectIdentifier(T.self)
            state.names[key] = String(describing: T.self)
            for entity in entities { state.tables[key, default: Table()].put(entity) }
        }
    }

    /// Makes `number` entities with fresh ids through `init(id:store:)` and keeps them.
    @discardableResult
    public func create<T: Storable>(_ type: T.Type, number: Int = 1) -> [T] {
        let entities = reserveIDs(max(0, number)).map { T(id: $0, store: self) }
        put(entities)
        return entities
    }

    /// Keeps the entity `make` builds from a fresh id: `store.insert { id in User(id: id, name: "Ada") }`.
    @discardableResult
    public func insert<T: Storable>(_ make: (String) throws -> T) rethrows -> T {
        let entity = try make(reserveIDs(1)[0])
        put([entity])
        return entity
    }

    /// The entity of type `T` with `id`, or nil.
    public func find<T: Storable>(_ type: T.Type, id: String) -> T? {
        state.withLock { $0.tables[ObjectIdentifier(T.self)]?.byID[id] as? T }
    }

    /// Every entity of type `T`, in insertion order.
    public func findAll<T: Storable>(_ type: T.Type) -> [T] {
        state.withLock { ($0.tables[ObjectIdentifier(T.self)]?.all ?? []).compactMap { $0 as? T } }
    }

    /// The entities of type `T` for which `isIncluded` is true, in insertion order.
    public func filter<T: Storable>(_ type: T.Type, _ isIncluded: (T) throws -> Bool) rethrows -> [T] {
        try findAll(type).filter(isIncluded)
    }

    /// Replaces the stored entity with the same id; throws `notFound` when there is none.
    public func update<T: Storable>(_ entity: T) throws(StoreError) {
        try state.withLock { (state) throws(StoreError) in
            let key = ObjectIdentifier(T.self)
            guard state.tables[key]?.byID[entity.id] != nil else { throw StoreError.notFound(T.self, id: entity.id) }
            state.tables[key]!.byID[entity.id] = entity
        }
    }

    /// Removes the entity; throws `notFound` when it is not stored.
    public func delete<T: Storable>(_ entity: T) throws(StoreError) {
        try delete(T.self, id: entity.id)
    }

    /// Removes the entity of type `T` with `id`; throws `notFound` when there is none.
    public func delete<T: Storable>(_ type: T.Type, id: String) throws(StoreError) {
        try state.withLock { (state) throws(StoreError) in
            guard state.tables[ObjectIdentifier(T.self)]?.remove(id) == true else {
                throw StoreError.notFound(T.self, id: id)
            }
        }
    }

    /// Removes every entity and restarts ids at "0".
    public func reset() {
        state.withLock { $0 = State() }
    }

    /// Everything in the store as JSON: `{"nextId": 5, "entities": {"User": [...], "Comment": [...]}}`,
    /// types in name order.
    public func snapshot() -> JSONValue {
        let (nextID, tables) = state.withLock { state in
            (
                state.nextID,
                state.tables.map { (state.names[$0.key] ?? "\($0.key)", $0.value.all) }.sorted { $0.0 < $1.0 }
            )
        }
        var entities = JSONObject()
        for (name, all) in tables {
            entities[name] = .array(all.compactMap { $0.serialized() })
        }
        for (name, documents) in state.withLock({ $0.collections.map { ($0.key, $0.value.all) } }).sorted(by: {
            $0.0 < $1.0
        }) {
            entities[name] = .array(documents.map { .object($0) })
        }
        return .object(["nextId": .number(JSONNumber(nextID)), "entities": .object(entities)])
    }

    /// Writes `snapshot()` to `path` atomically.
    public func save(to path: String) throws(StoreError) {
        var bytes = JSONWriter(layout: .readable).write(snapshot())
        bytes.append(UInt8(ascii: "\n"))
        do {
            try Data(bytes).write(to: URL(fileURLWithPath: path), options: .atomic)
        } catch {
            throw StoreError(code: .file, message: "cannot save the store to \(path): \(error.localizedDescription)")
        }
    }

    /// Replaces the store's contents with a file written by `save(to:)`. Entities are decoded as the
    /// given types, matched by type name; names the list does not have are an error.
    public func load(from path: String, types: [any (Storable & Decodable).Type]) throws(StoreError) {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw StoreError(code: .file, message: "cannot read the store file \(path)")
        }
        let root: JSONValue
        do {
            root = try JSONParser.parse(Array(data))
        } catch {
            throw StoreError(code: .file, message: "\(path):\(error)")
        }
        guard let nextID = root["nextId"]?.numberValue?.intValue, let entities = root["entities"]?.objectValue else {
            throw StoreError(code: .file, message: "\(path): not a saved store (needs \"nextId\" and \"entities\")")
        }
        var fresh = State()
        fresh.nextID = nextID
        for (name, list) in entities {
            guard let type = types.first(where: { String(describing: $0) == name }) else {
                throw StoreError(code: .file, message: "\(path): no type named \(name) was given to load")
            }
            var table = Table()
            for item in list.arrayValue ?? [] {
                do {
                    table.put(try Store.decode(type, from: item))
                } catch {
                    throw StoreError(code: .file, message: "\(path): a \(name) cannot be decoded: \(error)")
                }
            }
            fresh.tables[ObjectIdentifier(type)] = table
            fresh.names[ObjectIdentifier(type)] = name
        }
        state.withLock { $0 = fresh }
    }

    private static func decode<T: Storable & Decodable>(_ type: T.Type, from value: JSONValue) throws -> any Storable {
        try JSONDecoder().decode(T.self, from: Data(JSONWriter().write(value)))
    }
}
