import Foundation
import KakapoHTTP
import KakapoJSON
import Testing

@testable import KakapoCassette

/// Requests that differ from a recording only in values a client makes afresh match it (`RequestAlignment`).
@Suite("Matching by shape")
struct ShapeMatchingTests {
    static let recordedAt = "2026-11-29T10:00:00.000Z"
    static let now = ISOTime.parse(recordedAt)!.seconds + 86_400 * 30

    static func search(_ body: String, query: String = "", headers: HTTP.Headers = ["Content-Type": "application/json"])
        -> HTTP.Request
    {
        HTTP.Request(method: .post, target: "/search" + query, headers: headers, body: Array(body.utf8))
    }

    static func recording(_ request: HTTP.Request, answer: String, volatile: VolatileFields = VolatileFields())
        -> Interaction
    {
        var interaction = Interaction(
            request: request, response: HTTP.Response(status: 200, contentType: "text/plain", text: answer),
            recordedAt: recordedAt, durationMilliseconds: 1)
        interaction.volatile = volatile
        return interaction
    }

    static func play(_ request: HTTP.Request, in interactions: [Interaction], matching: MatchOptions = MatchOptions())
        -> (position: Int, places: [String])?
    {
        var index = InteractionIndex(matching: matching)
        for (position, interaction) in interactions.enumerated() { index.insert(interaction, at: position) }
        if let exact = index.play(request) { return (exact, []) }
        return index.playAligned(request, interactions: interactions, now: now)
    }

    static let recorded = [
        recording(
            search(
                #"{"nonce": "0b9d7c1e-3f7a-4c52-9e1a-5c3d2b1a0f9e", "ts": "2026-11-29T10:00:00.120Z", "q": "x"}"#,
                query: "?t=1795946400"),
            answer: "first"),
        recording(
            search(
                #"{"nonce": "5a1c0f9e-2b3d-4c52-9e1a-0b9d7c1e3f7a", "ts": "2026-11-29T10:00:01.500Z", "q": "x"}"#,
                query: "?t=1795946401"),
            answer: "second"),
    ]

    static func live(q: String = "x", nonce: String = UUID().uuidString.lowercased(), at now: Int64 = now)
        -> HTTP.Request
    {
        let ts = ISOTime(seconds: now, nanoseconds: 250_000_000)
        var layout = ts
        layout.fractionDigits = 3
        return search(#"{"nonce": "\#(nonce)", "ts": "\#(layout.text)", "q": "\#(q)"}"#, query: "?t=\(now)")
    }

    @Test("fresh UUIDs, times and epoch seconds match, in recorded order, naming the places; another q does not")
    func byShape() throws {
        var index = InteractionIndex()
        for (position, interaction) in Self.recorded.enumerated() { index.insert(interaction, at: position) }
        let exact = index.play(Self.live())
        #expect(exact == nil)
        let found = index.playAligned(Self.live(), interactions: Self.recorded, now: Self.now)
        let first = try #require(found)
        #expect(first.position == 0)
        #expect(Set(first.places) == ["query t", "body /nonce", "body /ts"])
        let second = index.playAligned(Self.live(), interactions: Self.recorded, now: Self.now)
        #expect(second?.position == 1)
        let other = index.playAligned(Self.live(q: "y"), interactions: Self.recorded, now: Self.now)
        #expect(other == nil)
    }

    @Test("--strict-values, --match-body-field, a time a day away, and a path segment all keep values exact")
    func limits() throws {
        var strict = MatchOptions()
        strict.matchesByShape = false
        #expect(Self.play(Self.live(), in: Self.recorded, matching: strict) == nil)
        var exact = MatchOptions()
        exact.exactBodyFields = [JSONPointer("/nonce")!]
        #expect(Self.play(Self.live(), in: Self.recorded, matching: exact) == nil)
        let stale = Self.search(
            #"{"nonce": "0b9d7c1e-3f7a-4c52-9e1a-5c3d2b1a0f9e", "ts": "2026-10-01T10:00:00.120Z", "q": "x"}"#,
            query: "?t=1795946400")
        #expect(Self.play(stale, in: Self.recorded) == nil, "a time a month from its sending is no time of sending")
        let user = Self.recording(
            HTTP.Request(method: .get, target: "/users/0b9d7c1e-3f7a-4c52-9e1a-5c3d2b1a0f9e"), answer: "ada")
        let other = HTTP.Request(method: .get, target: "/users/5a1c0f9e-2b3d-4c52-9e1a-0b9d7c1e3f7a")
        #expect(Self.play(other, in: [user]) == nil)
        let aligned = RequestAlignment.align(
            RequestAlignment.Live(other, matching: MatchOptions()), to: user, matching: MatchOptions(), now: Self.now)
        #expect(aligned == nil, "a path segment was aligned")
        // A MongoDB ObjectId under userId is a resource, not a nonce; the same hex under requestId is one.
        let byUser = Self.recording(Self.search(#"{"userId": "507f1f77bcf86cd799439011"}"#), answer: "ada")
        #expect(Self.play(Self.search(#"{"userId": "507f191e810c19729de860ea"}"#), in: [byUser]) == nil)
        let byRequest = Self.recording(Self.search(#"{"requestId": "507f1f77bcf86cd799439011"}"#), answer: "ok")
        #expect(Self.play(Self.search(#"{"requestId": "507f191e810c19729de860ea"}"#), in: [byRequest])?.position == 0)
    }

    @Test("volatile request places match whatever their values, even with --strict-values; a form body too")
    func declared() throws {
        let form: HTTP.Headers = ["Content-Type": "application/x-www-form-urlencoded"]
        let recorded = [
            Self.recording(
                Self.search("q=x&page=1&token=abc", query: "?seq=7", headers: form), answer: "a",
                volatile: VolatileFields(request: [.query("seq"), .body(JSONPointer("/token")!)]))
        ]
        var strict = MatchOptions()
        strict.matchesByShape = false
        let live = Self.search("q=x&page=1&token=zzz", query: "?seq=8", headers: form)
        let found = try #require(Self.play(live, in: recorded, matching: strict))
        #expect(Set(found.places) == ["query seq (marked volatile)", "body /token (marked volatile)"])
        #expect(Self.play(Self.search("q=x&page=2&token=zzz", query: "?seq=8", headers: form), in: recorded) == nil)
    }

    @Test("a poll with a new timestamp each time plays all of its recordings in order, past the first 64")
    func longPoll() {
        let base = ISOTime.parse(Self.recordedAt)!.seconds
        let recorded = (0..<70).map { step in
            Self.recording(HTTP.Request(method: .get, target: "/poll?t=\(base + Int64(step))"), answer: "\(step)")
        }
        var index = InteractionIndex()
        for (position, interaction) in recorded.enumerated() { index.insert(interaction, at: position) }
        var played: [Int] = []
        for step in 0..<71 {
            let live = HTTP.Request(method: .get, target: "/poll?t=\(Self.now + Int64(step))")
            played.append(index.playAligned(live, interactions: recorded, now: Self.now)?.position ?? -1)
        }
        #expect(played == Array(0..<70) + [69])
    }

    @Test("a 304 recorded for a date answers a revalidation with the moved date, not one with an ETag")
    func movedValidators() {
        let recorded = [
            Interaction(
                request: HTTP.Request(
                    method: .get, target: "/doc", headers: ["If-Modified-Since": "Sun, 01 Nov 2026 10:00:00 GMT"]),
                response: HTTP.Response(status: 304), recordedAt: Self.recordedAt, durationMilliseconds: 1)
        ]
        let moved = HTTP.Request(
            method: .get, target: "/doc", headers: ["If-Modified-Since": "Tue, 01 Dec 2026 10:00:00 GMT"])
        #expect(Self.play(moved, in: recorded)?.position == 0)
        let etag = HTTP.Request(method: .get, target: "/doc", headers: ["If-None-Match": "\"x\""])
        #expect(Self.play(etag, in: recorded) == nil)
    }

    @Test("the miss report leaves out what matches by shape: only /q is named")
    func missReport() {
        let report = MissReport(
            request: Self.live(q: "y", at: WallClock.seconds), cassette: Cassette(interactions: Self.recorded),
            redactor: Redactor())
        let differences = report.nearest.first?.differences ?? []
        #expect(differences == ["body field /q differs"], "\(differences)")
    }

    @Test("volatile places round-trip through the cassette file and a bad one names its place")
    func codec() throws {
        var interaction = Self.recorded[0]
        interaction.volatile = VolatileFields(
            request: [.body(JSONPointer("/nonce")!), .query("t")],
            response: [.header("etag"), .body(JSONPointer("/id")!)])
        let bytes = CassetteCodec.encodeFile(Cassette(interactions: [interaction]))
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(text.contains(#""request": ["body /nonce", "query t"]"#), "\(text)")
        #expect(try CassetteFile.decode(bytes, file: "v.json").interactions[0].volatile == interaction.volatile)
        let bad = text.replacingOccurrences(of: #""query t""#, with: #""cookie t""#)
        let error = #expect(throws: CassetteError.self) { try CassetteFile.decode(Array(bad.utf8), file: "v.json") }
        #expect(error?.description.contains("v.json:") == true, "\(String(describing: error))")
    }
}
