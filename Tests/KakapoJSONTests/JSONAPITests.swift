import KakapoJSON
import Testing

private struct Dog: JSONAPIEntity {
    let id: String
    let name: String
    let chasedCat: Cat?
}

private struct Cat: JSONAPIEntity {
    let id: String
    let name: String
}

private struct User: JSONAPILinkedEntity {
    let id: String
    let name: String
    let dog: Dog?
    let bestFriend: PropertyPolicy<User>
    let friends: [User]
    let links: [String: JSONAPILink]?
}

@Suite("JSON:API")
struct JSONAPITests {
    fileprivate static let cat = Cat(id: "9", name: "Tom")
    fileprivate static let rex = Dog(id: "2", name: "Rex", chasedCat: cat)
    fileprivate static let bob = User(id: "3", name: "Bob", dog: nil, bestFriend: .none, friends: [], links: nil)
    fileprivate static let alice = User(
        id: "1", name: "Alice", dog: rex, bestFriend: .some(bob), friends: [bob],
        links: ["self": .simple("/users/1")])

    static func json(_ value: some Serializable) throws -> JSONValue { try #require(value.serialized()) }

    @Test("a resource has id, type, attributes, relationships with linkage, and its links")
    func resourceShape() throws {
        let document = try Self.json(JSONAPISerializer(Self.alice, includeChildren: false))
        let data = try #require(document["data"])
        #expect(data["id"] == "1")
        #expect(data["type"] == "user")
        #expect(data["attributes"] == ["name": "Alice"])
        #expect(data["relationships"]?["dog"] == ["data": ["type": "dog", "id": "2"]])
        #expect(data["relationships"]?["bestFriend"] == ["data": ["type": "user", "id": "3"]])
        #expect(data["relationships"]?["friends"] == ["data": [["type": "user", "id": "3"]]])
        #expect(data["links"] == ["self": "/users/1"])
        #expect(document["included"] == nil)
    }

    @Test("an empty to-one relationship is data null; PropertyPolicy.none leaves it out; empty to-many is []")
    func emptyRelationships() throws {
        let data = try #require(try Self.json(JSONAPISerializer(Self.bob))["data"])
        #expect(data["relationships"]?["dog"] == ["data": nil])
        #expect(data["relationships"]?["bestFriend"] == nil)
        #expect(data["relationships"]?["friends"] == ["data": []])
        #expect(data["links"] == nil)
    }

    @Test("included holds each related resource once, never the primary data, children's children on request")
    func included() throws {
        let direct = try Self.json(JSONAPISerializer([Self.alice, Self.bob]))
        let keys = direct["included"]?.arrayValue?.map { "\($0["type"]!.stringValue!)/\($0["id"]!.stringValue!)" }
        #expect(keys == ["dog/2"], "bob is primary data, so only the dog is included")
        #expect(direct["data"]?.arrayValue?.count == 2)

        let deep = try Self.json(JSONAPISerializer(Self.alice, includeAllChildren: true))
        let deepKeys = deep["included"]?.arrayValue?.map { "\($0["type"]!.stringValue!)/\($0["id"]!.stringValue!)" }
        #expect(deepKeys == ["dog/2", "user/3", "cat/9"])
    }

    @Test("top-level links and meta; keys of attributes and relationships follow transformers")
    func topLevel() throws {
        let serializer = JSONAPISerializer(
            [Self.bob], topLevelLinks: ["next": .object(href: "/users?page=2", meta: ["count": 10])],
            topLevelMeta: ["total": 1])
        let document = try Self.json(SnakecaseTransformer(serializer))
        #expect(document["links"] == ["next": ["href": "/users?page=2", "meta": ["count": 10]]])
        #expect(document["meta"] == ["total": 1])
        let alice = try Self.json(SnakecaseTransformer(JSONAPISerializer(Self.alice)))
        #expect(alice["data"]?["relationships"]?["best_friend"] != nil)
    }

    @Test("errors follow the spec: an errors array, status as a string, no data")
    func errors() throws {
        let document = JSONAPIErrorDocument([
            JSONAPIError(
                status: 422, code: "invalid", title: "Invalid name", detail: "name is empty",
                source: .init(pointer: "/data/attributes/name"))
        ])
        let json = try Self.json(document)
        #expect(json["data"] == nil)
        let error = try #require(json["errors"]?.arrayValue?.first)
        #expect(error["status"] == "422")
        #expect(error["source"] == ["pointer": "/data/attributes/name"])
        #expect(document.status == 422)
        #expect(JSONAPIErrorDocument([JSONAPIError(status: 404), JSONAPIError(status: 503)]).status == 500)
    }
}

/// Checks a document against the rules of jsonapi.org v1.1 that a serializer can break.
enum JSONAPIValidator {
    static func problems(_ document: JSONValue) -> [String] {
        var problems: [String] = []
        guard let top = document.objectValue else { return ["the document is not an object"] }
        let allowed: Set<String> = ["data", "errors", "meta", "links", "included", "jsonapi"]
        for key in top.keys where !allowed.contains(key) { problems.append("unknown top-level member \(key)") }
        if top["data"] != nil && top["errors"] != nil { problems.append("data and errors together") }
        if top["data"] == nil && top["errors"] == nil && top["meta"] == nil {
            problems.append("no data, errors or meta")
        }
        if top["included"] != nil && top["data"] == nil { problems.append("included without data") }
        var seen = Set<String>()
        var resources: [JSONValue] = []
        if let data = top["data"] { resources += data.arrayValue ?? (data.isNull ? [] : [data]) }
        resources += top["included"]?.arrayValue ?? []
        for resource in resources {
            guard let type = resource["type"]?.stringValue, let id = resource["id"]?.stringValue else {
                problems.append("a resource without string type and id")
                continue
            }
            if !seen.insert("\(type)/\(id)").inserted { problems.append("\(type)/\(id) appears twice") }
            for forbidden in ["id", "type", "relationships", "links"] where resource["attributes"]?[forbidden] != nil {
                problems.append("attribute named \(forbidden) in \(type)/\(id)")
            }
            for (name, relationship) in resource["relationships"]?.objectValue ?? JSONObject() {
                guard let linkage = relationship["data"] else { continue }
                for item in linkage.arrayValue ?? (linkage.isNull ? [] : [linkage]) {
                    if item.objectValue?.keys.sorted() != ["id", "type"] {
                        problems.append("relationship \(name) of \(type)/\(id) has a linkage that is not {type, id}")
                    }
                }
            }
        }
        for error in top["errors"]?.arrayValue ?? [] where error["status"] != nil && error["status"]?.stringValue == nil
        {
            problems.append("an error status that is not a string")
        }
        return problems
    }
}

@Suite("JSON:API spec rules")
struct JSONAPISpecTests {
    fileprivate static var documents: [(String, any Serializable)] {
        [
            ("one", JSONAPISerializer(JSONAPITests.alice)),
            ("many", JSONAPISerializer([JSONAPITests.alice, JSONAPITests.bob], topLevelMeta: ["count": 2])),
            ("deep", JSONAPISerializer(JSONAPITests.alice, includeAllChildren: true)),
            ("empty", JSONAPISerializer([User]())),
            ("snake", SnakecaseTransformer(JSONAPISerializer(JSONAPITests.alice))),
            ("errors", JSONAPIErrorDocument([JSONAPIError(status: 404, title: "Not found")])),
        ]
    }

    @Test("every document the serializers write follows the spec's rules")
    func allDocumentsValid() throws {
        for (name, document) in Self.documents {
            let json = try #require(document.serialized())
            #expect(JSONAPIValidator.problems(json) == [], "\(name)")
        }
    }

    @Test("the validator catches what it checks")
    func validatorWorks() {
        let broken: JSONValue = [
            "data": ["type": "user", "id": "1", "attributes": ["id": "1"]], "errors": [["status": 404]],
        ]
        #expect(JSONAPIValidator.problems(broken).count == 3)
    }
}
