import Foundation
import KakapoJSON
import KakapoStore
import Testing

private struct User: Storable, Codable {
    let id: String
    let name: String
    init(id: String, store: Store) {
        self.id = id
        self.name = "User \(id)"
    }
    init(id: String, name: String) {
        self.id = id
        self.name = name
    }
}

private struct Comment: Storable, Codable {
    let id: String
    let text: String
    init(id: String, store: Store) {
        self.id = id
        self.text = "Comment \(id) of \(store.findAll(User.self).count) users"
    }
}

@Suite("Store")
struct StoreTests {
    @Test("one id counter per store: 3 users then 2 comments get ids 0-2 and 3-4")
    func sharedCounter() {
        let store = Store()
        #expect(store.create(User.self, number: 3).map(\.id) == ["0", "1", "2"])
        #expect(store.create(Comment.self, number: 2).map(\.id) == ["3", "4"])
        #expect(store.findAll(Comment.self).first?.text == "Comment 3 of 3 users", "init(id:store:) may read the store")
    }

    @Test("find, findAll in insertion order, filter, update, delete")
    func crud() throws {
        let store = Store()
        store.create(User.self, number: 3)
        let ada = store.insert { id in User(id: id, name: "Ada") }
        #expect(ada.id == "3")
        #expect(store.find(User.self, id: "3")?.name == "Ada")
        #expect(store.find(Comment.self, id: "3") == nil)
        #expect(store.findAll(User.self).map(\.id) == ["0", "1", "2", "3"])
        #expect(store.filter(User.self) { $0.name.hasPrefix("User") }.map(\.id) == ["0", "1", "2"])
        try store.update(User(id: "1", name: "Grace"))
        #expect(store.findAll(User.self).map(\.name) == ["User 0", "Grace", "User 2", "Ada"])
        try store.delete(ada)
        #expect(store.findAll(User.self).count == 3)
    }

    @Test("update or delete of an unknown entity throws notFound")
    func unknownEntity() {
        let store = Store()
        #expect(throws: StoreError.notFound(User.self, id: "9")) { try store.update(User(id: "9", name: "x")) }
        #expect(throws: StoreError.self) { try store.delete(User(id: "9", name: "x")) }
        #expect(StoreError.notFound(User.self, id: "9").status == 404)
    }

    @Test("closures given to filter and insert may use the store themselves")
    func reentrancy() {
        let store = Store()
        store.create(User.self, number: 2)
        let nested = store.filter(User.self) { user in
            store.find(User.self, id: user.id) != nil && !store.findAll(User.self).isEmpty
        }
        #expect(nested.count == 2)
        let inserted = store.insert { id in User(id: id, name: "after \(store.findAll(User.self).count)") }
        #expect(inserted.name == "after 2")
    }

    @Test("concurrent inserts and updates lose nothing")
    func concurrency() async throws {
        let store = Store()
        await withTaskGroup(of: Void.self) { group in
            for index in 0..<500 {
                group.addTask { store.insert { id in User(id: id, name: "n\(index)") } }
            }
        }
        let all = store.findAll(User.self)
        #expect(all.count == 500)
        #expect(Set(all.map(\.id)).count == 500)
        #expect(Set(all.map(\.id)) == Set((0..<500).map(String.init)))
    }

    @Test("a store saves to a JSON file and loads back; reset empties it")
    func saveLoadReset() throws {
        let store = Store()
        store.create(User.self, number: 2)
        store.create(Comment.self, number: 1)
        let path = NSTemporaryDirectory() + "kakapo-store-\(UUID().uuidString).json"
        try store.save(to: path)
        let snapshot = try JSONParser.parse(Array(try Data(contentsOf: URL(fileURLWithPath: path))))
        #expect(snapshot["nextId"] == 3)
        #expect(snapshot["entities"]?["User"]?.arrayValue?.count == 2)

        let loaded = Store()
        try loaded.load(from: path, types: [User.self, Comment.self])
        #expect(loaded.findAll(User.self).map(\.name) == ["User 0", "User 1"])
        #expect(loaded.insert { id in User(id: id, name: "next") }.id == "3")
        #expect(throws: StoreError.self) { try Store().load(from: path, types: [User.self]) }

        loaded.reset()
        #expect(loaded.findAll(User.self).isEmpty)
        #expect(loaded.create(User.self).first?.id == "0")
    }

    @Test("Codable entities serialize without hand-written code")
    func serialization() {
        #expect(
            User(id: "1", name: "Ada").toData().map { String(decoding: $0, as: UTF8.self) }
                == #"{"id":"1","name":"Ada"}"#)
    }
}
