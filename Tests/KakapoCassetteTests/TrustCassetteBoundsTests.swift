import Foundation
import KakapoHTTP
import Testing

@testable import KakapoCassette

/// Issue 25, "Bounds": the work a miss report does and the bytes a body decodes to are bounded.
@Suite("Trust: bounded miss reports and decoding")
struct TrustCassetteBoundsTests {
    static func cassette(_ count: Int) -> Cassette {
        Cassette(
            interactions: (0..<count).map { index in
                Interaction(
                    request: HTTP.Request(method: .get, target: "/items/\(index)?page=\(index % 7)"),
                    response: HTTP.Response(status: 200), recordedAt: "", durationMilliseconds: 0)
            })
    }

    @Test("a miss on a large cassette compares at most comparedLimit recordings in full, and still finds the nearest")
    func cappedWork() {
        let cassette = Self.cassette(50_000)
        var interactions = cassette.interactions
        interactions.append(
            Interaction(
                request: HTTP.Request(method: .post, target: "/orders/7?page=2"), response: HTTP.Response(status: 201),
                recordedAt: "", durationMilliseconds: 0))
        let report = MissReport(
            request: HTTP.Request(method: .post, target: "/orders/7?page=3"),
            cassette: Cassette(interactions: interactions),
            redactor: Redactor())
        #expect(report.compared == MissReport.comparedLimit)
        #expect(report.nearest.first?.position == 50_000)
        #expect(report.nearest.first?.differences == ["query parameter page: 3 here, 2 recorded"])
        // The same path, another method, comes next; then paths one segment away.
        let near = MissReport(
            request: HTTP.Request(method: .get, target: "/items/49999?page=3"), cassette: cassette, redactor: Redactor()
        )
        #expect(near.nearest.map(\.position).first == 49_999)
    }

    @Test("the rough first look agrees with the full comparison on host, method and path")
    func roughScoreIsALowerBound() {
        let request = HTTP.Request(method: .get, target: "/a/b/c?x=1")
        for target in ["/a/b/c", "/a/b", "/a/x/c?y=2", "/", "//a//b/c", "/a/b/c/d/e?x=1&x=2"] {
            for method in [HTTP.Method.get, .post] {
                let recorded = HTTP.Request(method: method, target: target)
                let key = RequestKey(request, redactor: Redactor())
                let full = MissReport.compare(
                    recorded, with: request, key: key, body: .empty, redactor: Redactor(), matching: MatchOptions())
                #expect(
                    MissReport.roughScore(of: recorded, against: request, path: key.path) <= full.score, "\(target)")
            }
        }
        #expect(MissReport.distance("/users/7", "/users/1") == 2)
        #expect(MissReport.distance("/users/7", "/users") == 3)
    }

    @Test("a body that decodes past 16 MiB is not decoded, and a normal one still is")
    func boundedDecoding() throws {
        let bomb = ContentCoding.gzip.encode([UInt8](repeating: 0, count: 20 << 20))
        #expect(ContentCoding.gzip.decoding(bomb) == .tooLarge)
        #expect(ContentCoding.gzip.decode(bomb) == nil)
        #expect(ContentCoding.gzip.decodesPastLimit(bomb))
        let deflated = ContentCoding.deflate.encode([UInt8](repeating: 7, count: 17 << 20))
        #expect(ContentCoding.deflate.decoding(deflated) == .tooLarge)
        let small = Array("hello, hello, hello".utf8)
        #expect(ContentCoding.gzip.decode(ContentCoding.gzip.encode(small)) == small)
        #expect(!ContentCoding.gzip.decodesPastLimit(ContentCoding.gzip.encode(small)))
        #expect(ContentCoding.gzip.decoding([1, 2, 3]) == .invalid)
        // Stored as sent, with a note; loaded back byte for byte.
        let headers: HTTP.Headers = ["Content-Encoding": "gzip"]
        let stored = BodyCoding.encode(bomb, headers: headers)
        #expect(stored?.objectValue?["undecoded"]?.stringValue?.contains("16 MiB") == true)
        #expect(stored?.objectValue?["base64"] != nil)
        #expect(try BodyCoding.decode(stored, path: []) == bomb)
    }
}
