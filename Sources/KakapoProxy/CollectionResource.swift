import KakapoHTTP
import KakapoJSON
import KakapoRouter
import KakapoStore
import KakapoStubs

/// A resource declared in a routes file, served as json-server serves one: `GET /todos` (with
/// `CollectionQuery`), `GET /todos/{id}`, `POST /todos` (201 and `Location`), `PUT` (replace), `PATCH`
/// (merge), `DELETE` (204), a JSON 404 for an unknown id and 405 for other methods.
struct CollectionResource: Sendable {
    let definition: ResourceDefinition
    let collection: StoreCollection
    /// The entities the collection starts with, and goes back to when the Store is reset.
    let seed: [JSONObject]
    private let segments: [String]

    init(definition: ResourceDefinition, collection: StoreCollection, seed: [JSONObject]) {
        self.definition = definition
        self.collection = collection
        self.seed = seed
        segments = definition.path.split(separator: "/").map(String.init)
    }

    /// The answer when `path` is this collection or one of its items; nil otherwise.
    func answer(_ request: HTTPRequest, path: String) -> HTTPResponse? {
        let parts = path.split(separator: "/", omittingEmptySubsequences: true)
        guard parts.count == segments.count || parts.count == segments.count + 1 else { return nil }
        for (have, want) in zip(parts, segments)
        where String(have).removingPercentEncodingLeniently(plusAsSpace: false) != want {
            return nil
        }
        do {
            if parts.count == segments.count { return try answerCollection(request) }
            return try answerItem(
                request, id: String(parts[segments.count]).removingPercentEncodingLeniently(plusAsSpace: false))
        } catch {
            return .json(["error": .string(error.message)], status: error.status)
        }
    }

    private func answerCollection(_ request: HTTPRequest) throws(HTTPError) -> HTTPResponse {
        switch request.method {
        case .get, .head:
            return try CollectionQuery(request).respond(collection.all().map { .object($0) }, request: request)
        case .post:
            let created = collection.insert(try body(of: request))
            let id = collection.id(of: created) ?? ""
            var response = HTTPResponse.entity(created, status: 201)
            response.headers.add(name: "Location", value: definition.path + "/" + id.percentEncodedForQuery())
            return response
        default:
            throw notAllowed(request, allowed: "GET, HEAD, POST")
        }
    }

    private func answerItem(_ request: HTTPRequest, id: String) throws(HTTPError) -> HTTPResponse {
        let found: JSONObject?
        switch request.method {
        case .get, .head: found = collection.find(id: id)
        case .put: found = collection.replace(id: id, with: try body(of: request))
        case .patch: found = collection.merge(id: id, with: try body(of: request))
        case .delete:
            guard collection.delete(id: id) else { throw notFound(id) }
            return HTTPResponse(status: 204)
        default:
            throw notAllowed(request, allowed: "GET, HEAD, PUT, PATCH, DELETE")
        }
        guard let found else { throw notFound(id) }
        return .entity(found, status: 200)
    }

    private func body(of request: HTTPRequest) throws(HTTPError) -> JSONObject {
        let value: JSONValue
        do {
            value = try JSONParser.parse(request.body)
        } catch {
            throw HTTPError(status: 400, message: "the request body is not valid JSON: \(error)")
        }
        guard case .object(let object) = value else {
            throw HTTPError(status: 400, message: "the body must be a JSON object, not \(value.kindDescription)")
        }
        return object
    }

    private func notFound(_ id: String) -> HTTPError {
        HTTPError(status: 404, message: "no entity with \(collection.idField) \"\(id)\" in \(definition.path)")
    }

    private func notAllowed(_ request: HTTPRequest, allowed: String) -> HTTPError {
        HTTPError(status: 405, message: "\(request.method) is not served at \(request.path); use \(allowed)")
    }
}

extension HTTPResponse {
    /// A compact JSON answer holding one entity.
    static func entity(_ object: JSONObject, status: Int) -> HTTPResponse {
        HTTPResponse(
            status: status, headers: ["Content-Type": "application/json"], body: JSONWriter().write(.object(object)))
    }
}
