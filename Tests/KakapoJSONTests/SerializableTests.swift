import Foundation
import KakapoJSON
import Testing

private struct Dog: Serializable {
    let name: String
    let age: Int
}

private struct Person: Serializable {
    let userNameOfALuckyUser: String
    let nickName: String?
    let dogs: [Dog]
    let scores: [String: Double]
    let middleName: PropertyPolicy<String>
    let friend: PropertyPolicy<Dog>
}

private class Animal: Serializable {
    let legs = 4
}

private final class Cat: Animal {
    let indoor = true
}

private enum Mood: Serializable {
    case happy
}

private struct CodableUser: Codable, Serializable {
    let id: String
    let displayName: String
    let joined: Date
    let website: URL?

    enum CodingKeys: String, CodingKey {
        case id
        case displayName = "display"
        case joined
        case website
    }
}

private struct PolicyCodable: Encodable, Serializable {
    let a: PropertyPolicy<Int>
    let b: PropertyPolicy<Int>
    let c: PropertyPolicy<Int>
}

private struct Stringy: CustomSerializable {
    func customSerialized(transformingKeys keyTransformer: KeyTransformer?) -> JSONValue? { .string("custom") }
}

@Suite("Serializable")
struct SerializableTests {
    fileprivate static let person = Person(
        userNameOfALuckyUser: "alex", nickName: nil, dogs: [Dog(name: "Rex", age: 3)], scores: ["b": 2, "a": 1.5],
        middleName: .null, friend: .none)

    @Test("reflection writes stored properties in declaration order and leaves nil optionals out")
    func reflection() {
        #expect(
            JSONWriter().string(Self.person.serialized()!)
                == #"{"userNameOfALuckyUser":"alex","dogs":[{"name":"Rex","age":3}],"scores":{"a":1.5,"b":2},"middleName":null}"#
        )
    }

    @Test(
        "PropertyPolicy: none is left out, null is null, some is the value",
        arguments: [
            (PropertyPolicy<Int>.none, nil as String?),
            (PropertyPolicy<Int>.null, "null"),
            (PropertyPolicy<Int>.some(7), "7"),
        ])
    func propertyPolicy(policy: PropertyPolicy<Int>, expected: String?) {
        #expect(policy.serialized().map { JSONWriter().string($0) } == expected)
    }

    @Test(
        "snake case",
        arguments: [
            ("", ""), ("a", "a"), ("A", "a"), ("aA", "a_a"), ("AA", "a_a"), ("camelCase", "camel_case"),
            ("userNameOfALuckyUser", "user_name_of_a_lucky_user"), ("already_snake", "already_snake"), ("_", "_"),
        ])
    func snakeCase(key: String, expected: String) {
        #expect(SnakecaseTransformer(0).transform(key: key) == expected)
    }

    @Test("a transformer renames every nested key, dictionary keys included")
    func nestedRenaming() {
        let json = SnakecaseTransformer(Self.person).serialized()!
        #expect(json.objectValue?.keys == ["user_name_of_a_lucky_user", "dogs", "scores", "middle_name"])
        let nested = SnakecaseTransformer(["outerKey": ["innerKey": 1]]).serialized()!
        #expect(JSONWriter().string(nested) == #"{"outer_key":{"inner_key":1}}"#)
    }

    @Test("nested transformers apply the inner one first")
    func nestedTransformers() {
        let upper = KeyRenamer(["someKey": 1]) { $0.uppercased() }
        #expect(JSONWriter().string(SnakecaseTransformer(upper).serialized()!) == #"{"s_o_m_e_k_e_y":1}"#)
        let lower = KeyRenamer(SnakecaseTransformer(["someKey": 1])) { $0.uppercased() }
        #expect(JSONWriter().string(lower.serialized()!) == #"{"SOME_KEY":1}"#)
    }

    @Test("Codable types use their CodingKeys, in order; dates are ISO 8601 and URLs strings")
    func codable() {
        let user = CodableUser(
            id: "1", displayName: "Ada", joined: Date(timeIntervalSince1970: 0),
            website: URL(string: "https://a.example"))
        #expect(
            JSONWriter().string(user.serialized()!)
                == #"{"id":"1","display":"Ada","joined":"1970-01-01T00:00:00Z","website":"https://a.example"}"#)
        let snake = SnakecaseTransformer(
            CodableUser(id: "2", displayName: "B", joined: Date(timeIntervalSince1970: 0), website: nil))
        #expect(snake.serialized()?.objectValue?.keys == ["id", "display", "joined"])
    }

    @Test("PropertyPolicy works inside Codable types too")
    func policyInCodable() {
        #expect(
            JSONWriter().string(PolicyCodable(a: .none, b: .null, c: .some(3)).serialized()!) == #"{"b":null,"c":3}"#)
    }

    @Test("classes include inherited properties; simple enums are their case name; custom wins")
    func otherShapes() {
        #expect(JSONWriter().string(Cat().serialized()!) == #"{"legs":4,"indoor":true}"#)
        #expect(Mood.happy.serialized() == .string("happy"))
        #expect(Stringy().serialized() == .string("custom"))
        #expect([Stringy(), Stringy()].serialized() == .array(["custom", "custom"]))
        let optional: String? = nil
        #expect(optional.serialized() == nil)
    }

    @Test("output is deterministic: the same value gives the same bytes")
    func deterministic() {
        let value = ["z": 1, "a": 2, "m": 3] as [String: Int]
        let first = value.toData()
        for _ in 0..<20 { #expect(value.toData() == first) }
        #expect(first.map { String(decoding: $0, as: UTF8.self) } == #"{"a":2,"m":3,"z":1}"#)
    }
}
