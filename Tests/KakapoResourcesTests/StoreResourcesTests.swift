import KakapoHTTP
import KakapoJSON
import KakapoResources
import KakapoStore
import KakapoStubs
import Testing

private struct Book: Storable, Codable {
    let id: String
    let title: String
    init(id: String, store: Store) {
        self.id = id
        self.title = "Book \(id)"
    }
}

/// Store resources answered in process, with no server: typed resources through their router, routes-file
/// collections through `answerCollection`.
@Suite("Store resources")
struct StoreResourcesTests {
    private static func request(_ method: HTTP.Method, _ target: String, _ body: String = "") -> HTTP.Request {
        HTTP.Request(method: method, target: target, body: Array(body.utf8))
    }

    private static func typed(_ resources: StoreResources, _ request: HTTP.Request) async -> HTTP.Response? {
        await resources.registry.match(request)?.respond(to: request)
    }

    private static func collection(_ resources: StoreResources, _ request: HTTP.Request) -> HTTP.Response? {
        guard case .now(let response)? = resources.answerCollection(request) else { return nil }
        return response
    }

    private static func json(_ response: HTTP.Response?) throws -> JSONValue {
        try JSONParser.parse(response?.body ?? [])
    }

    @Test("a typed resource creates, reads, patches, replaces and deletes, and ids never come from the body")
    func typedResource() async throws {
        let store = Store()
        store.create(Book.self, number: 1)
        let resources = StoreResources()
        resources.add(Book.self, at: "books/", in: store)
        #expect(resources.attached.count == 1)

        let created = await Self.typed(resources, Self.request(.post, "/books", #"{"id":"9","title":"Dune"}"#))
        #expect(created?.status == 201)
        #expect(created?.headers["Location"] == "/books/1")
        #expect(try Self.json(created) == ["id": "1", "title": "Dune"])
        let patched = await Self.typed(resources, Self.request(.patch, "/books/1", #"{"title":"Dune Messiah"}"#))
        #expect(try Self.json(patched)["title"] == "Dune Messiah")
        #expect(store.find(Book.self, id: "1")?.title == "Dune Messiah")
        _ = await Self.typed(resources, Self.request(.put, "/books/0", #"{"title":"Zero"}"#))
        #expect(try Self.json(await Self.typed(resources, Self.request(.get, "/books"))).arrayValue?.count == 2)
        #expect(await Self.typed(resources, Self.request(.delete, "/books/0"))?.status == 204)
        let missing = await Self.typed(resources, Self.request(.get, "/books/0"))
        #expect(missing?.status == 404)
        #expect(try Self.json(missing)["error"] == #"no Book with id "0""#)
        let notJSON = await Self.typed(resources, Self.request(.post, "/books", "[1]"))
        #expect(notJSON?.status == 400)
        #expect(store.findAll(Book.self).map(\.id) == ["1"])
    }

    @Test("a routes-file collection lists its seed with json-server's query, takes new entities, and resets")
    func collection() throws {
        let resources = StoreResources()
        #expect(!resources.hasCollections && Self.collection(resources, Self.request(.get, "/posts")) == nil)
        let seed: [JSONObject] = [["id": 1, "title": "b", "votes": 3], ["id": 2, "title": "a", "votes": 7]]
        resources.replaceCollections([(ResourceDefinition(path: "/posts"), seed: seed)])
        #expect(resources.hasCollections && resources.attached.count == 1)

        let sorted = Self.collection(resources, Self.request(.get, "/posts?_sort=title"))
        #expect(try Self.json(sorted).arrayValue?.compactMap { $0["title"]?.stringValue } == ["a", "b"])
        let filtered = Self.collection(resources, Self.request(.get, "/posts?votes_gte=5"))
        #expect(try Self.json(filtered).arrayValue?.compactMap { $0["id"] } == [2])
        let paged = Self.collection(resources, Self.request(.get, "/posts?_page=2&_limit=1"))
        #expect(paged?.headers["X-Total-Count"] == "2")
        #expect(try Self.json(paged).arrayValue?.count == 1)
        #expect(Self.collection(resources, Self.request(.get, "/posts?_page=0"))?.status == 400)
        #expect(Self.collection(resources, Self.request(.get, "/posts?title_like=(a"))?.status == 400)

        let created = Self.collection(resources, Self.request(.post, "/posts", #"{"title":"c"}"#))
        #expect(created?.status == 201)
        #expect(try Self.json(Self.collection(resources, Self.request(.get, "/posts"))).arrayValue?.count == 3)

        // The same definition and seed again keep what was created; a reset puts the seed back.
        resources.replaceCollections([(ResourceDefinition(path: "/posts"), seed: seed)])
        #expect(try Self.json(Self.collection(resources, Self.request(.get, "/posts"))).arrayValue?.count == 3)
        #expect(resources.resetInMemory() == 1)
        #expect(try Self.json(Self.collection(resources, Self.request(.get, "/posts"))).arrayValue?.count == 2)

        // A collection no longer declared is no longer served.
        resources.replaceCollections([(ResourceDefinition(path: "/comments"), seed: [])])
        #expect(Self.collection(resources, Self.request(.get, "/posts")) == nil)
        #expect(try Self.json(Self.collection(resources, Self.request(.get, "/comments"))) == [])
    }

    @Test("a shared store that fails answers 503 with the reason")
    func unavailable() throws {
        struct Down: Error, CustomStringConvertible { var description: String { "connection refused" } }
        let response = SharedStoreCall.unavailable(Down())
        #expect(response.status == 503)
        #expect(try Self.json(response)["error"] == "the shared store is unavailable: connection refused")
    }
}
