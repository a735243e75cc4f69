import Foundation
import KakapoHTTP
import KakapoJSON
import KakapoRouter
import KakapoStore
import KakapoStubs
import Synchronization

/// REST resources backed by the Store, answered after routes and before the cassette (design section 2).
///
/// ```swift
/// server.resources.add(User.self, at: "/users", in: store)
/// // GET /users -> 200 [...]          POST /users {"name":"Ada"} -> 201 {"id":"20","name":"Ada"}
/// // GET /users/20 -> 200 {...}       PUT or PATCH /users/20 -> 200 {...}      DELETE /users/20 -> 204
/// ```
public final class StoreResources: Sendable {
    let registry = RouterRegistry()
    private let stores = Mutex<[Store]>([])
    /// Resources declared in routes files, replaced as a whole when the files change.
    private let collections = Mutex<[CollectionResource]>([])
    private let collectionCount = Atomic<Int>(0)
    /// The Store that keeps the entities of resources declared in routes files.
    public let store = Store()

    init() {}

    /// Makes `store` visible at `/__kakapo/store` (dump with GET, reset with DELETE). Stores given to
    /// `add(_:at:in:)` are attached automatically.
    public func attach(_ store: Store) {
        stores.withLock { stores in
            if !stores.contains(where: { $0 === store }) { stores.append(store) }
        }
    }

    /// Every attached store, in the order attached.
    public var attached: [Store] { stores.withLock { $0 } }

    /// Serves entities of type `T` under `path`. Bodies are JSON; `id` comes from the path and the
    /// store, never from the body.
    public func add<T: Storable & Codable>(_ type: T.Type, at path: String, in store: Store) {
        attach(store)
        let router = registry.router
        let base = "/" + path.split(separator: "/").joined(separator: "/")
        router.get(base) { _ in store.findAll(T.self) }
        router.get(base + "/:id") { request in
            let id = try request.parameters.require("id")
            guard let entity = store.find(T.self, id: id) else { throw StoreError.notFound(T.self, id: id) }
            return entity
        }
        router.post(base) { request in
            let body = try request.json()
            let entity = try store.insert { id in try StoreResources.decode(T.self, from: body, id: id) }
            return Response(statusCode: 201, body: entity, headerFields: ["Location": "\(base)/\(entity.id)"])
        }
        let replace: RouteHandler = { request in
            let id = try request.parameters.require("id")
            guard let existing = store.find(T.self, id: id) else { throw StoreError.notFound(T.self, id: id) }
            var body = try request.json()
            if request.method == .patch, let patch = body.objectValue, case .object(var merged)? = existing.serialized()
            {
                for (key, value) in patch { merged[key] = value }
                body = .object(merged)
            }
            let entity = try StoreResources.decode(T.self, from: body, id: id)
            try store.update(entity)
            return entity
        }
        router.put(base + "/:id", handler: replace)
        router.patch(base + "/:id", handler: replace)
        router.delete(base + "/:id") { request in
            try store.delete(T.self, id: try request.parameters.require("id"))
            return Response(statusCode: 204)
        }
    }

    /// Serves the resources of a routes file, with the entities each starts with. A resource that was
    /// already served with the same definition keeps its entities; new and changed ones start from their
    /// seed; resources no longer declared stop being served (their entities are dropped).
    public func replaceCollections(_ resources: [(ResourceDefinition, seed: [JSONObject])]) {
        if !resources.isEmpty { attach(store) }
        collections.withLock { current in
            var next: [CollectionResource] = []
            for (definition, seed) in resources {
                let name = String(definition.path.dropFirst())
                if let existing = current.first(where: { $0.definition == definition && $0.seed == seed }) {
                    next.append(existing)
                    continue
                }
                let collection = store.collection(name, idField: definition.idField)
                collection.reset(to: seed)
                next.append(CollectionResource(definition: definition, collection: collection, seed: seed))
            }
            for old in current where !next.contains(where: { $0.definition.path == old.definition.path }) {
                old.collection.reset(to: [])
            }
            current = next
            collectionCount.store(next.count, ordering: .releasing)
        }
    }

    /// The definitions of the routes-file resources being served.
    var collectionDefinitions: [JSONValue] { collections.withLock { $0.map(\.definition.definition) } }

    /// Puts every routes-file resource back to its seed (after `DELETE /__kakapo/store`).
    func reseedCollections() {
        for resource in collections.withLock({ $0 }) { resource.collection.reset(to: resource.seed) }
    }

    /// The answer of a routes-file resource for `request`, or nil when none is at its path.
    func answerCollection(_ request: HTTPRequest) -> HTTPResponse? {
        guard collectionCount.load(ordering: .acquiring) > 0 else { return nil }
        let (_, path) = RouterRegistry.hostAndPath(request)
        for resource in collections.withLock({ $0 }) {
            if let response = resource.answer(request, path: path) { return response }
        }
        return nil
    }

    static func decode<T: Decodable>(_ type: T.Type, from body: JSONValue, id: String) throws -> T {
        guard case .object(var object) = body else {
            throw HTTPError(status: 400, message: "the body must be a JSON object, not \(body.kindDescription)")
        }
        object["id"] = .string(id)
        do {
            return try JSONDecoder().decode(T.self, from: Data(JSONWriter().write(.object(object))))
        } catch {
            throw HTTPError(status: 400, message: "the body is not a valid \(T.self): \(error)")
        }
    }
}
