import Foundation
import Kakapo
import KakapoTestSupport
import Testing

/// Resources declared in a routes file, served as json-server serves them, through real sockets.
@Suite("Routes-file resources")
struct RouteResourceTests {
    static let todos = #"""
        [{"id": 1, "title": "write docs", "done": false, "priority": 2, "owner": {"name": "ada"}},
         {"id": 2, "title": "fix bug", "done": true, "priority": 1, "owner": {"name": "grace"}},
         {"id": 3, "title": "review", "done": false, "priority": 3, "owner": {"name": "ada"}},
         {"id": 4, "title": "release", "done": false, "priority": 1, "owner": {"name": "linus"}}]
        """#

    static func start(_ configuration: ProxyConfiguration = ProxyConfiguration()) async throws -> ProxyHarness {
        try await ProxyHarness.serving(
            routes:
                #"{"resources": [{"path": "/todos", "seed": "todos.json"}, {"path": "/api/notes", "idField": "key"}]}"#,
            files: ["todos.json": todos], configuration)
    }

    static func ids(_ response: HTTP.Response) throws -> [Int] {
        try JSONParser.parse(response.body).arrayValue?.compactMap { $0["id"]?.numberValue?.intValue } ?? []
    }

    @Test("list, filter, sort and paginate as json-server does, with X-Total-Count and Link")
    func listing() async throws {
        let harness = try await Self.start()
        defer { Task { await harness.stop() } }
        let all = try await harness.client.send(.get, "/todos")
        #expect(all.status == 200)
        #expect(all.source == "store")
        #expect(try Self.ids(all) == [1, 2, 3, 4])
        #expect(all.headers["X-Total-Count"] == nil)
        #expect(try Self.ids(try await harness.client.send(.get, "/todos?done=false")) == [1, 3, 4])
        #expect(try Self.ids(try await harness.client.send(.get, "/todos?owner.name=ada")) == [1, 3])
        #expect(try Self.ids(try await harness.client.send(.get, "/todos?id=1&id=4")) == [1, 4])
        #expect(try Self.ids(try await harness.client.send(.get, "/todos?priority_gte=2")) == [1, 3])
        #expect(try Self.ids(try await harness.client.send(.get, "/todos?priority_lte=1&done_ne=true")) == [4])
        #expect(try Self.ids(try await harness.client.send(.get, "/todos?title_like=^RE")) == [3, 4])
        #expect(try Self.ids(try await harness.client.send(.get, "/todos?_sort=priority")) == [2, 4, 1, 3])
        #expect(
            try Self.ids(try await harness.client.send(.get, "/todos?_sort=priority,id&_order=desc,asc")) == [
                3, 1, 2, 4,
            ])

        let page = try await harness.client.send(.get, "/todos?done=false&_page=2&_limit=2")
        #expect(try Self.ids(page) == [4])
        #expect(page.headers["X-Total-Count"] == "3")
        let base = "http://127.0.0.1:\(harness.port)/todos?done=false"
        #expect(
            page.headers["Link"]
                == "<\(base)&_page=1&_limit=2>; rel=\"first\", <\(base)&_page=1&_limit=2>; rel=\"prev\", "
                + "<\(base)&_page=2&_limit=2>; rel=\"last\"")
        let limited = try await harness.client.send(.get, "/todos?_limit=3")
        #expect(try Self.ids(limited) == [1, 2, 3])
        #expect(limited.headers["X-Total-Count"] == "4")
        #expect(try await harness.client.send(.get, "/todos?_page=0").status == 400)
        #expect(try await harness.client.send(.get, "/todos?_sort=id&_order=sideways").status == 400)
    }

    @Test("get, create, replace, merge and delete; unknown ids answer a JSON 404")
    func crud() async throws {
        let harness = try await Self.start()
        defer { Task { await harness.stop() } }
        #expect(try JSONParser.parse(try await harness.client.send(.get, "/todos/2").body)["title"] == "fix bug")

        let created = try await harness.send(.post, "/todos", json: #"{"title": "new"}"#)
        #expect(created.status == 201)
        let createdBody = try JSONParser.parse(created.body)
        let id = try #require(createdBody["id"]?.numberValue?.intValue)
        #expect(id == 5)
        #expect(created.headers["Location"] == "/todos/\(id)")
        #expect(try JSONParser.parse(try await harness.client.send(.get, "/todos/\(id)").body) == createdBody)
        let given = try await harness.send(.post, "/todos", json: #"{"id": "custom", "title": "mine"}"#)
        #expect(given.headers["Location"] == "/todos/custom")

        let replaced = try await harness.send(.put, "/todos/1", json: #"{"title": "rewritten"}"#)
        #expect(try JSONParser.parse(replaced.body) == ["title": "rewritten", "id": 1])
        let merged = try await harness.send(.patch, "/todos/2", json: #"{"done": false, "tag": "x"}"#)
        let mergedBody = try JSONParser.parse(merged.body)
        #expect(mergedBody["title"] == "fix bug")
        #expect(mergedBody["done"] == false)
        #expect(mergedBody["tag"] == "x")

        #expect(try await harness.client.send(.delete, "/todos/3").status == 204)
        let missing = try await harness.client.send(.get, "/todos/3")
        #expect(missing.status == 404)
        #expect(missing.headers["Content-Type"] == "application/json")
        #expect(try JSONParser.parse(missing.body)["error"] == #"no entity with id "3" in /todos"#)
        #expect(try await harness.send(.patch, "/todos/99", json: "{}").status == 404)
        #expect(try await harness.client.send(.delete, "/todos/99").status == 404)
        #expect(try await harness.send(.post, "/todos", json: "[1]").status == 400)
        #expect(try await harness.send(.post, "/todos", json: "{").status == 400)
        #expect(try await harness.client.send(.delete, "/todos").status == 405)

        let note = try await harness.send(.post, "/api/notes", json: #"{"text": "hi"}"#)
        let key = try #require(try JSONParser.parse(note.body)["key"]?.stringValue)
        #expect(try await harness.client.send(.get, "/api/notes/\(key)").status == 200)
    }

    @Test("concurrent PATCHes of different fields lose none of them")
    func concurrentPatches() async throws {
        let harness = try await Self.start()
        defer { Task { await harness.stop() } }
        let client = harness.client
        try await withThrowingTaskGroup(of: Int.self) { group in
            for index in 0..<50 {
                group.addTask {
                    var headers: HTTP.Headers = ["Content-Type": "application/json"]
                    headers.add(name: "X-N", value: "\(index)")
                    return try await client.send(
                        .patch, "/todos/1", headers: headers, body: Array(#"{"f\#(index)": \#(index)}"#.utf8)
                    ).status
                }
            }
            for try await status in group { #expect(status == 200) }
        }
        let body = try JSONParser.parse(try await harness.client.send(.get, "/todos/1").body)
        for index in 0..<50 { #expect(body["f\(index)"]?.numberValue?.intValue == index) }
    }

    @Test("the Store dump shows the entities, and a reset puts the seed back")
    func dumpAndReset() async throws {
        let harness = try await Self.start()
        defer { Task { await harness.stop() } }
        _ = try await harness.client.send(.delete, "/todos/1")
        _ = try await harness.send(.post, "/todos", json: #"{"title": "extra"}"#)
        let dump = try JSONParser.parse(try await harness.client.send(.get, "/__kakapo/store").body)
        let stored = dump["stores"]?.arrayValue?.first?["entities"]?["todos"]?.arrayValue
        #expect(stored?.count == 4)
        #expect(try await harness.client.send(.delete, "/__kakapo/store").status == 200)
        #expect(try Self.ids(try await harness.client.send(.get, "/todos")) == [1, 2, 3, 4])
    }

    @Test("a resource seeded from a recorded answer in the cassette")
    func seedFromCassette() async throws {
        let upstream = try await TestUpstream.start { _ in
            .response(HTTP.Response(status: 200, contentType: "application/json", text: #"[{"id": "a"}, {"id": "b"}]"#))
        }
        let cassette = try Fixtures.temporaryDirectory() + "/api.json"
        let recorder = try await ProxyHarness.recording(upstream, cassette: cassette)
        _ = try await recorder.client.send(.get, "/todos")
        await recorder.stop()
        await upstream.stop()

        let harness = try await ProxyHarness.serving(
            routes: #"{"resources": [{"path": "/todos", "seed": {"cassette": "GET /todos"}}]}"#,
            ProxyConfiguration(mode: .replay, cassettePath: cassette))
        defer { Task { await harness.stop() } }
        _ = try await harness.send(.post, "/todos", json: #"{"title": "c"}"#)
        let list = try JSONParser.parse(try await harness.client.send(.get, "/todos").body)
        #expect(list.arrayValue?.count == 3)
        #expect(list.arrayValue?.first == ["id": "a"])

        await #expect(throws: RoutesError.self) {
            _ = try await ProxyHarness.serving(
                routes: #"{"resources": [{"path": "/todos", "seed": {"cassette": "GET /nothing"}}]}"#,
                ProxyConfiguration(mode: .replay, cassettePath: cassette))
        }
    }
}
