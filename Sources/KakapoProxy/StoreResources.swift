import Foundation
import KakapoHTTP
import KakapoJSON
import KakapoRouter
import KakapoStore
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
