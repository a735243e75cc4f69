import Foundation
import KakapoJSON
import Testing

/// The JSON-layer snippet of docs/swift.md, compiled and checked so it cannot rot.
@Suite("README JSON snippet")
struct ReadmeSnippetTests {
    struct Person: Serializable {
        let userName: String
        let nickName: String?
        let middleName: PropertyPolicy<String>
    }

    @Test("gives the output the guide shows")
    func snippet() {
        let plain = Person(userName: "ada", nickName: nil, middleName: .null).toData()
        #expect(plain.map { String(decoding: $0, as: UTF8.self) } == #"{"userName":"ada","middleName":null}"#)
        let snake = SnakecaseTransformer(Person(userName: "ada", nickName: nil, middleName: .none)).toData()
        #expect(snake.map { String(decoding: $0, as: UTF8.self) } == #"{"user_name":"ada"}"#)
    }

    @Test("the Swift guide shows this snippet and its output")
    func guideShowsIt() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().path
        let guide = try String(contentsOfFile: root + "/docs/swift.md", encoding: .utf8)
        for line in [
            "struct Person: Serializable {",
            "    let nickName: String?                 // nil is left out",
            #"Person(userName: "ada", nickName: nil, middleName: .null).toData()"#,
            #"// {"userName":"ada","middleName":null}"#,
            #"SnakecaseTransformer(Person(userName: "ada", nickName: nil, middleName: .none)).toData()"#,
            #"// {"user_name":"ada"}"#,
        ] {
            #expect(guide.contains(line + "\n"), "docs/swift.md no longer shows: \(line)")
        }
    }
}
