import Foundation
import KakapoCassette
import KakapoHTTP
import KakapoJSON
import KakapoTestSupport
import Testing

@Suite("Cassette parser under mutation")
struct CassetteFuzzTests {
    @Test("5,000 seeded mutations of a valid cassette never crash, and every error names file and position")
    func mutations() {
        let original = CassetteCodec.encodeFile(CassetteFileTests.sample())
        var random = SeededRandom(seed: 20_261_122)
        var decoded = 0
        for _ in 0..<5000 {
            var bytes = original
            for _ in 0..<Int.random(in: 1...4, using: &random) {
                let position = Int.random(in: 0..<max(bytes.count, 1), using: &random)
                switch Int.random(in: 0..<5, using: &random) {
                case 0 where !bytes.isEmpty: bytes[position] = UInt8.random(in: 0...255, using: &random)
                case 1 where !bytes.isEmpty: bytes.remove(at: position)
                case 2:
                    bytes.insert(
                        Array("{}[]\",:0e-\\u".utf8).randomElement(using: &random)!, at: min(position, bytes.count))
                case 3: bytes = Array(bytes.prefix(position))
                default:
                    let end = min(bytes.count, position + Int.random(in: 1...40, using: &random))
                    if position < end { bytes.replaceSubrange(position..<end, with: []) }
                }
            }
            do {
                _ = try CassetteFile.decode(bytes, file: "fuzz.json")
                decoded += 1
            } catch {
                #expect(error.description.hasPrefix("fuzz.json"))
                if error.code == .syntax { #expect(error.line != nil && error.column != nil) }
            }
        }
        #expect(decoded < 5000, "the mutations must break something")
    }

    @Test("huge strings, deep nesting and invalid UTF-8 are errors, not crashes")
    func hostileShapes() {
        let deep = String(repeating: "[", count: 10_000)
        let huge =
            #"{"version":1,"interactions":[{"request":{"method":"GET","url":"/"},"response":{"status":200,"body":{"text":""#
            + String(repeating: "x", count: 5_000_000) + #""}}}]}"#
        #expect(throws: CassetteError.self) { try CassetteFile.decode(Array(deep.utf8), file: "deep.json") }
        #expect(
            (try? CassetteFile.decode(Array(huge.utf8), file: "huge.json"))?.interactions.first?.response.body.count
                == 5_000_000)
        #expect(throws: CassetteError.self) {
            try CassetteFile.decode([0x7B, 0x22, 0xC3, 0x28, 0x22, 0x3A, 0x31, 0x7D], file: "utf8.json")
        }
    }
}

@Suite("Matcher under random requests")
struct MatcherFuzzTests {
    @Test("a recorded request always finds itself, in any query order, and random requests never crash")
    func randomRequests() {
        var random = SeededRandom(seed: 42)
        let names = ["a", "b", "page", "q", "api_key", "x%20y"]
        let paths = ["/", "/users", "/users/1", "/search", "/a/b/c"]
        var interactions: [Interaction] = []
        for _ in 0..<300 {
            let query = (0..<Int.random(in: 0...4, using: &random)).map { _ in
                names.randomElement(using: &random)! + "=" + String(Int.random(in: 0...3, using: &random))
            }
            let target =
                paths.randomElement(using: &random)! + (query.isEmpty ? "" : "?" + query.joined(separator: "&"))
            let body = Bool.random(using: &random) ? #"{"n":\#(Int.random(in: 0...3, using: &random)),"k":"v"}"# : ""
            interactions.append(
                Interaction(
                    request: HTTP.Request(
                        method: Bool.random(using: &random) ? .get : .post, target: target, body: Array(body.utf8)),
                    response: HTTP.Response(status: 200), recordedAt: "", durationMilliseconds: 0))
        }
        var index = InteractionIndex()
        for (position, interaction) in interactions.enumerated() { index.insert(interaction, at: position) }
        for interaction in interactions {
            var shuffled = interaction.request
            let parts = shuffled.query.map { $0.split(separator: "&").shuffled(using: &random).joined(separator: "&") }
            if let parts { shuffled.target = shuffled.path + "?" + parts }
            if let json = try? JSONParser.parse(shuffled.body), case .object(let object) = json {
                shuffled.body = JSONWriter().write(
                    .object(JSONObject(object.members.reversed().map { ($0.key, $0.value) })))
            }
            #expect(!index.candidates(for: shuffled).isEmpty, "\(interaction.request.target) must find itself")
        }
        for _ in 0..<2000 {
            let bytes = (0..<Int.random(in: 0...40, using: &random)).map { _ in
                UInt8.random(in: 32...126, using: &random)
            }
            let target = "/" + String(decoding: bytes, as: UTF8.self)
            _ = index.play(HTTP.Request(method: .get, target: target, body: bytes))
        }
    }
}
