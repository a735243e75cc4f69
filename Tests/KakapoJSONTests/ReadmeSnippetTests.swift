import KakapoJSON
import Testing

/// The README's JSON-layer snippet, compiled and checked so it cannot rot.
@Suite("README JSON snippet")
struct ReadmeSnippetTests {
    struct Person: Serializable {
        let userName: String
        let nickName: String?
        let middleName: PropertyPolicy<String>
    }

    @Test("gives the output the README shows")
    func snippet() {
        let plain = Person(userName: "ada", nickName: nil, middleName: .null).toData()
        #expect(plain.map { String(decoding: $0, as: UTF8.self) } == #"{"userName":"ada","middleName":null}"#)
        let snake = SnakecaseTransformer(Person(userName: "ada", nickName: nil, middleName: .none)).toData()
        #expect(snake.map { String(decoding: $0, as: UTF8.self) } == #"{"user_name":"ada"}"#)
    }
}
