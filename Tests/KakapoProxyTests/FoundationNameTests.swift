import Foundation
import Kakapo
import Testing

/// `import Kakapo` next to `import Foundation` leaves Foundation's names usable, in type position too.
@Suite("Names next to Foundation")
struct FoundationNameTests {
    @Test("Foundation's JSONSerialization is unambiguous in a file that imports Kakapo")
    func jsonSerialization() throws {
        let options: JSONSerialization.ReadingOptions = [.fragmentsAllowed]
        let value = try JSONSerialization.jsonObject(with: Data("[1]".utf8), options: options)
        #expect((value as? [Int]) == [1])
        struct Point: Serializable {
            let x: Int
        }
        #expect(KakapoSerialization.serialize(Point(x: 1)) == ["x": 1])
    }
}
