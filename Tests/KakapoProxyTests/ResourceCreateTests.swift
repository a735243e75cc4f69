import Foundation
import Kakapo
import KakapoTestSupport
import Testing

/// `POST` to a routes-file resource, through curl: a taken id is refused, new ids follow the seed's kind.
@Suite("Routes-file resources: creating entities")
struct ResourceCreateTests {
    static func start() async throws -> ProxyHarness {
        try await ProxyHarness.serving(
            routes: #"""
                {"resources": [
                  {"path": "/todos", "seed": [{"id": 1, "title": "a"}, {"id": 7, "title": "b"}]},
                  {"path": "/tags", "seed": [{"id": "red"}, {"id": "0"}]},
                  {"path": "/notes"}]}
                """#)
    }

    /// `curl -X POST` with a JSON body: the status, the `Location` header and the parsed body.
    static func post(_ harness: ProxyHarness, _ path: String, _ json: String) async throws
        -> (status: Int, location: String?, body: JSONValue)
    {
        let result = try await Curl.run([
            "--include", "-X", "POST", "-H", "Content-Type: application/json", "--data-binary", json,
            "http://127.0.0.1:\(harness.port)\(path)",
        ])
        #expect(result.status == 0, "\(result.error)")
        let text = result.output.replacingOccurrences(of: "\r\n", with: "\n")
        let parts = text.components(separatedBy: "\n\n")
        let head = parts[0].split(separator: "\n")
        let status = Int(head.first?.split(separator: " ").dropFirst().first ?? "") ?? 0
        let location = head.first { $0.lowercased().hasPrefix("location:") }.map {
            String($0.dropFirst("location:".count)).trimmingCharacters(in: .whitespaces)
        }
        return (status, location, try JSONParser.parse(Array(parts.dropFirst().joined(separator: "\n\n").utf8)))
    }

    @Test(
        "a POST with an id that is taken answers 409 naming the id and changes nothing", .enabled(if: Curl.isAvailable))
    func takenID() async throws {
        let harness = try await Self.start()
        defer { Task { await harness.stop() } }
        let refused = try await Self.post(harness, "/todos", #"{"id": 7, "title": "clobber"}"#)
        #expect(refused.status == 409)
        let message = try #require(refused.body["error"]?.stringValue)
        #expect(message.contains(#"/todos already holds an entity with id "7""#), "\(message)")
        let kept = try JSONParser.parse(try await harness.client.send(.get, "/todos/7").body)
        #expect(kept == ["id": 7, "title": "b"])
        #expect(try await Self.post(harness, "/todos", #"{"id": "7"}"#).status == 409)
        #expect(try await Self.post(harness, "/tags", #"{"id": "red"}"#).status == 409)
        let fresh = try await Self.post(harness, "/todos", #"{"id": 9, "title": "mine"}"#)
        #expect(fresh.status == 201)
        #expect(fresh.location == "/todos/9")
    }

    @Test(
        "a POST without an id gets a number after the highest when the seed's ids are numbers",
        .enabled(if: Curl.isAvailable))
    func numberIDs() async throws {
        let harness = try await Self.start()
        defer { Task { await harness.stop() } }
        let first = try await Self.post(harness, "/todos", #"{"title": "c"}"#)
        #expect(first.status == 201)
        #expect(first.body["id"] == 8)
        #expect(first.location == "/todos/8")
        #expect(try await harness.client.send(.delete, "/todos/8").status == 204)
        let second = try await Self.post(harness, "/todos", #"{"title": "d"}"#)
        #expect(second.body["id"] == 9, "a deleted id is not given again")
        let list = try JSONParser.parse(try await harness.client.send(.get, "/todos").body)
        #expect(list.arrayValue?.compactMap { $0["id"]?.numberValue?.intValue } == [1, 7, 9])
    }

    @Test(
        "a POST without an id gets a free string when the seed's ids are strings, or there is no seed",
        .enabled(if: Curl.isAvailable))
    func stringIDs() async throws {
        let harness = try await Self.start()
        defer { Task { await harness.stop() } }
        var seen: Set<String> = ["red", "0"]
        for _ in 0..<3 {
            let created = try await Self.post(harness, "/tags", #"{"name": "x"}"#)
            #expect(created.status == 201)
            let id = try #require(created.body["id"]?.stringValue)
            #expect(seen.insert(id).inserted, "\(id) is given twice")
        }
        let note = try await Self.post(harness, "/notes", #"{"text": "hi"}"#)
        #expect(note.body["id"]?.stringValue != nil)
    }
}
