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
    package let registry = RouterRegistry()
    private let stores = Mutex<[Store]>([])
    /// Resources declared in routes files, replaced as a whole when the files change.
    private let collections = Mutex<[CollectionResource]>([])
    /// Resources declared in Swift while a shared store is configured: served from the shared store.
    private let typedCollections = Mutex<[CollectionResource]>([])
    private let collectionCount = Atomic<Int>(0)
    /// The Store that keeps the entities of resources declared in routes files.
    public let store = Store()
    /// Where resources keep their entities when several instances share them; nil: this process's memory.
    public let shared: (any SharedDocumentStore)?
    /// How long a shared-store call may take before the request is answered 503, in seconds.
    package let sharedTimeout: Double

    package init(shared: (any SharedDocumentStore)? = nil, sharedTimeout: Double = 5) {
        self.shared = shared
        self.sharedTimeout = sharedTimeout
    }

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
    ///
    /// With a shared store (`ProxyConfiguration.sharedStore`), the entities live there instead, as the
    /// JSON `T` serializes to, in the collection named after the type; bodies are still decoded as `T`.
    public func add<T: Storable & Codable>(_ type: T.Type, at path: String, in store: Store) {
        attach(store)
        let base = "/" + path.split(separator: "/").joined(separator: "/")
        if let shared {
            let resource = CollectionResource(
                definition: ResourceDefinition(path: base), storage: .shared(shared, name: String(describing: T.self)),
                seed: []
            ) { object, id throws(HTTPError) in
                let entity = try StoreResources.decode(T.self, from: .object(object), id: id ?? "0")
                guard case .object(var serialized)? = entity.serialized() else {
                    throw HTTPError(status: 400, message: "a \(T.self) does not serialize to a JSON object")
                }
                if id == nil { serialized["id"] = nil }
                return serialized
            }
            typedCollections.withLock { $0.append(resource) }
            collectionCount.add(1, ordering: .releasing)
            return
        }
        let router = registry.router
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
        if !resources.isEmpty && shared == nil { attach(store) }
        collections.withLock { current in
            var next: [CollectionResource] = []
            for (definition, seed) in resources {
                let name = String(definition.path.dropFirst())
                if let existing = current.first(where: { $0.definition == definition && $0.seed == seed }) {
                    next.append(existing)
                    continue
                }
                if let shared {
                    let gate = SeedGate { try await shared.seed(name, idField: definition.idField, with: seed) }
                    gate.start()
                    next.append(
                        CollectionResource(
                            definition: definition, storage: .shared(shared, name: name), seed: seed, gate: gate))
                } else {
                    let collection = store.collection(name, idField: definition.idField)
                    collection.reset(to: seed)
                    next.append(CollectionResource(definition: definition, storage: .memory(collection), seed: seed))
                }
            }
            for old in current where !next.contains(where: { $0.definition.path == old.definition.path }) {
                if case .memory(let collection) = old.storage { collection.reset(to: []) }
            }
            current = next
            collectionCount.store(next.count + typedCollections.withLock { $0.count }, ordering: .releasing)
        }
    }

    /// The definitions of the routes-file resources being served.
    package var collectionDefinitions: [JSONValue] { collections.withLock { $0.map(\.definition.definition) } }

    /// `DELETE /__kakapo/store` in memory: empties every attached store and puts the routes-file resources
    /// kept in memory back to their seed. Returns how many stores were reset.
    package func resetInMemory() -> Int {
        let stores = attached
        for store in stores { store.reset() }
        for resource in collections.withLock({ $0 }) {
            if case .memory(let collection) = resource.storage { collection.reset(to: resource.seed) }
        }
        return stores.count
    }

    /// Empties the shared store and restarts its ids, then puts the routes-file resources' seeds back.
    package func resetShared(_ shared: any SharedDocumentStore) async throws {
        let seeds = collections.withLock { resources in
            resources.map { (name: String($0.definition.path.dropFirst()), idField: $0.idField, documents: $0.seed) }
        }
        try await SharedStoreCall.run(timeout: sharedTimeout) { try await shared.reset(seeding: seeds) }
    }

    /// Whether any json-server style collection is served.
    package var hasCollections: Bool { collections.withLock { !$0.isEmpty } }

    /// The answer of a resource served from a collection (routes files; Swift ones with a shared store)
    /// for `request`: at once from memory, later from the shared store; nil when none is at its path.
    package func answerCollection(_ request: HTTP.Request) -> CollectionAnswer? {
        guard collectionCount.load(ordering: .acquiring) > 0 else { return nil }
        let (_, path) = RouterRegistry.hostAndPath(request)
        for resource in collections.withLock({ $0 }) + typedCollections.withLock({ $0 }) {
            guard let asked = resource.operation(request, path: path) else { continue }
            let operation: CollectionOperation
            switch asked {
            case .failure(let error): return .now(.error(error))
            case .success(let found): operation = found
            }
            switch resource.storage {
            case .memory(let collection):
                return .now(resource.respond(to: request, operation, resource.perform(operation, in: collection)))
            case .shared(let shared, let name):
                let timeout = sharedTimeout
                return .later {
                    do {
                        let outcome = try await SharedStoreCall.run(timeout: timeout) {
                            try await resource.gate?.wait()
                            return try await resource.perform(operation, in: shared, name: name)
                        }
                        return resource.respond(to: request, operation, outcome)
                    } catch let error as HTTPError {
                        return .error(error)
                    } catch {
                        return SharedStoreCall.unavailable(error)
                    }
                }
            }
        }
        return nil
    }

    static func decode<T: Decodable>(_ type: T.Type, from body: JSONValue, id: String) throws(HTTPError) -> T {
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

/// A collection resource's answer: ready now (memory), or after the shared store has answered.
package enum CollectionAnswer: Sendable {
    case now(HTTP.Response)
    case later(@Sendable () async -> HTTP.Response)
}
