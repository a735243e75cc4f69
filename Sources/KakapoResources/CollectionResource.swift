import KakapoHTTP
import KakapoJSON
import KakapoRouter
import KakapoStore
import KakapoStubs

/// A resource declared in a routes file, served as json-server serves one: `GET /todos` (with
/// `CollectionQuery`), `GET /todos/{id}`, `POST /todos` (201 and `Location`), `PUT` (replace), `PATCH`
/// (merge), `DELETE` (204), a JSON 404 for an unknown id and 405 for other methods. Its documents live in
/// this process's `Store` or, with `--store`, in a `SharedDocumentStore`; either way the request is read
/// into a `CollectionOperation` first and the answer written from its `CollectionOutcome`.
struct CollectionResource: Sendable {
    let definition: ResourceDefinition
    let storage: CollectionStorage
    /// The entities the collection starts with, and goes back to when the Store is reset.
    let seed: [JSONObject]
    /// Checks and completes a document before it is kept (typed resources: decoded as their Swift type).
    let validate: (@Sendable (JSONObject, _ id: String?) throws(HTTPError) -> JSONObject)?
    /// For a shared store: requests wait until the seed is in the database.
    let gate: SeedGate?
    private let segments: [String]

    init(
        definition: ResourceDefinition, storage: CollectionStorage, seed: [JSONObject], gate: SeedGate? = nil,
        validate: (@Sendable (JSONObject, _ id: String?) throws(HTTPError) -> JSONObject)? = nil
    ) {
        self.definition = definition
        self.storage = storage
        self.seed = seed
        self.gate = gate
        self.validate = validate
        segments = definition.path.split(separator: "/").map(String.init)
    }

    var idField: String { definition.idField }

    /// What `request` asks of this collection; nil when `path` is neither the collection nor one of its
    /// items, an error for a request it refuses (bad body, method not allowed).
    func operation(_ request: HTTP.Request, path: String) -> Result<CollectionOperation, HTTPError>? {
        let parts = path.split(separator: "/", omittingEmptySubsequences: true)
        guard parts.count == segments.count || parts.count == segments.count + 1 else { return nil }
        for (have, want) in zip(parts, segments)
        where String(have).removingPercentEncodingLeniently(plusAsSpace: false) != want {
            return nil
        }
        do throws(HTTPError) {
            if parts.count == segments.count {
                switch request.method {
                case .get, .head: return .success(.list)
                case .post: return .success(.insert(try body(of: request, id: nil)))
                default: throw notAllowed(request, allowed: "GET, HEAD, POST")
                }
            }
            let id = String(parts[segments.count]).removingPercentEncodingLeniently(plusAsSpace: false)
            switch request.method {
            case .get, .head: return .success(.find(id))
            case .put: return .success(.replace(id, try body(of: request, id: id)))
            case .patch: return .success(.merge(id, try body(of: request, id: nil, partial: true)))
            case .delete: return .success(.delete(id))
            default: throw notAllowed(request, allowed: "GET, HEAD, PUT, PATCH, DELETE")
            }
        } catch {
            return .failure(error)
        }
    }

    /// The answer to `operation` once it has been carried out.
    func respond(to request: HTTP.Request, _ operation: CollectionOperation, _ outcome: CollectionOutcome)
        -> HTTP.Response
    {
        do throws(HTTPError) {
            switch (operation, outcome) {
            case (.list, .documents(let documents)):
                return try CollectionQuery(request).respond(documents.map { .object($0) }, request: request)
            case (.insert, .document(let created?)):
                let id = StoreCollection.id(of: created, idField: idField) ?? ""
                var response = HTTP.Response.entity(created, status: 201)
                response.headers.add(name: "Location", value: definition.path + "/" + id.percentEncodedForQuery())
                return response
            case (.insert(let document), .conflict):
                let id = StoreCollection.id(of: document, idField: idField) ?? ""
                throw HTTPError(
                    status: 409,
                    message: "\(definition.path) already holds an entity with \(idField) \"\(id)\"; change it with "
                        + "PUT or PATCH \(definition.path)/\(id.percentEncodedForQuery()), or POST without an "
                        + "\(idField) to get a new one")
            case (.delete(let id), .deleted(let deleted)):
                guard deleted else { throw notFound(id) }
                return HTTP.Response(status: 204)
            case (.find(let id), .document(let found)), (.replace(let id, _), .document(let found)),
                (.merge(let id, _), .document(let found)):
                guard let found else { throw notFound(id) }
                return .entity(found, status: 200)
            default:
                throw HTTPError(status: 500, message: "the store answered \(outcome) to \(operation)")
            }
        } catch {
            return .error(error)
        }
    }

    /// Carries out `operation` in this process's Store.
    func perform(_ operation: CollectionOperation, in collection: StoreCollection) -> CollectionOutcome {
        switch operation {
        case .list: return .documents(collection.all())
        case .find(let id): return .document(collection.find(id: id))
        case .insert(let document):
            do {
                return .document(try collection.create(document))
            } catch {
                return .conflict
            }
        case .replace(let id, let document): return .document(collection.replace(id: id, with: document))
        case .merge(let id, let patch): return .document(collection.merge(id: id, with: patch))
        case .delete(let id): return .deleted(collection.delete(id: id))
        }
    }

    /// Carries out `operation` in the shared store.
    func perform(_ operation: CollectionOperation, in shared: any SharedDocumentStore, name: String) async throws
        -> CollectionOutcome
    {
        switch operation {
        case .list: return .documents(try await shared.all(in: name))
        case .find(let id): return .document(try await shared.find(id: id, in: name))
        case .insert(let document):
            guard let created = try await shared.create(document, into: name, idField: idField) else {
                return .conflict
            }
            return .document(created)
        case .replace(let id, let document):
            return .document(try await shared.replace(id: id, with: document, in: name, idField: idField))
        case .merge(let id, let patch):
            var check: (@Sendable (JSONObject) throws -> JSONObject)?
            if let validate {
                check = { merged in try validate(merged, id) }
            }
            return .document(try await shared.merge(id: id, with: patch, in: name, idField: idField, check: check))
        case .delete(let id): return .deleted(try await shared.delete(id: id, in: name))
        }
    }

    private func body(of request: HTTP.Request, id: String?, partial: Bool = false) throws(HTTPError) -> JSONObject {
        let value: JSONValue
        do {
            value = try JSONParser.parse(request.body)
        } catch {
            throw HTTPError(status: 400, message: "the request body is not valid JSON: \(error)")
        }
        guard case .object(let object) = value else {
            throw HTTPError(status: 400, message: "the body must be a JSON object, not \(value.kindDescription)")
        }
        guard let validate, !partial else { return object }
        return try validate(object, id)
    }

    private func notFound(_ id: String) -> HTTPError {
        HTTPError(status: 404, message: "no entity with \(idField) \"\(id)\" in \(definition.path)")
    }

    private func notAllowed(_ request: HTTP.Request, allowed: String) -> HTTPError {
        HTTPError(status: 405, message: "\(request.method) is not served at \(request.path); use \(allowed)")
    }
}

/// What a request asks of a collection.
enum CollectionOperation: Sendable {
    case list
    case find(String)
    case insert(JSONObject)
    case replace(String, JSONObject)
    case merge(String, JSONObject)
    case delete(String)
}

/// What the store answered.
enum CollectionOutcome: Sendable {
    case documents([JSONObject])
    case document(JSONObject?)
    case deleted(Bool)
    /// The document to insert has an id that is taken.
    case conflict
}

/// Where a collection's documents live.
enum CollectionStorage: Sendable {
    case memory(StoreCollection)
    case shared(any SharedDocumentStore, name: String)
}

extension HTTP.Response {
    /// A compact JSON answer holding one entity.
    static func entity(_ object: JSONObject, status: Int) -> HTTP.Response {
        HTTP.Response(
            status: status, headers: ["Content-Type": "application/json"], body: JSONWriter().write(.object(object)))
    }
}
