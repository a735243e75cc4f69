import KakapoCassette
import KakapoHTTP
import Testing

@Suite("Matching")
struct InteractionIndexTests {
    static func interaction(_ method: HTTP.Method, _ target: String, body: String = "", answer: String) -> Interaction {
        Interaction(
            request: HTTP.Request(method: method, target: target, body: Array(body.utf8)),
            response: HTTP.Response(status: 200, contentType: "text/plain", text: answer),
            recordedAt: "", durationMilliseconds: 0)
    }

    static func index(_ interactions: [Interaction], repeatPolicy: InteractionIndex.RepeatPolicy = .repeatLast)
        -> InteractionIndex
    {
        var index = InteractionIndex(repeatPolicy: repeatPolicy)
        for (position, interaction) in interactions.enumerated() { index.insert(interaction, at: position) }
        return index
    }

    @Test("method, path and query as a multiset; percent-encoding does not matter")
    func requestKey() {
        var index = Self.index([Self.interaction(.get, "/a?x=1&y=hello%20world&x=2", answer: "a")])
        #expect(index.play(HTTP.Request(method: .get, target: "/a?x=2&y=hello+world&x=1")) == 0)
        #expect(index.play(HTTP.Request(method: .get, target: "/a?x=1&y=hello%20world")) == nil)
        #expect(index.play(HTTP.Request(method: .post, target: "/a?x=1&y=hello%20world&x=2")) == nil)
        #expect(index.play(HTTP.Request(method: .get, target: "/b?x=1&y=hello%20world&x=2")) == nil)
    }

    @Test("secret query values are ignored, so a new token still matches")
    func secretQueryIgnored() {
        var index = Self.index([Self.interaction(.get, "/a?api_key=[REDACTED]&q=1", answer: "a")])
        #expect(index.play(HTTP.Request(method: .get, target: "/a?q=1&api_key=live-key")) == 0)
    }

    @Test("bodies: JSON as JSON, anything else byte for byte")
    func bodies() {
        var index = Self.index([
            Self.interaction(.post, "/j", body: #"{"a":1,"b":2}"#, answer: "json"),
            Self.interaction(.post, "/t", body: "a=1&b=2", answer: "form"),
        ])
        #expect(index.play(HTTP.Request(method: .post, target: "/j", body: Array(#"{"b":2, "a":1}"#.utf8))) == 0)
        #expect(index.play(HTTP.Request(method: .post, target: "/j", body: Array(#"{"b":3,"a":1}"#.utf8))) == nil)
        #expect(index.play(HTTP.Request(method: .post, target: "/t", body: Array("a=1&b=2".utf8))) == 1)
        #expect(index.play(HTTP.Request(method: .post, target: "/t", body: Array("b=2&a=1".utf8))) == nil)
    }

    @Test("repeats play in order, then the last repeats, or miss when asked")
    func repeats() {
        let recordings = (1...3).map { Self.interaction(.get, "/n", answer: "\($0)") }
        var repeating = Self.index(recordings)
        #expect((0..<5).map { _ in repeating.play(HTTP.Request(method: .get, target: "/n")) } == [0, 1, 2, 2, 2])
        var missing = Self.index(recordings, repeatPolicy: .miss)
        #expect((0..<4).map { _ in missing.play(HTTP.Request(method: .get, target: "/n")) } == [0, 1, 2, nil])
        #expect(missing.usedPositions == [0, 1, 2])
    }

    @Test("requests with different bodies keep separate playback order")
    func separateGroups() {
        var index = Self.index([
            Self.interaction(.post, "/p", body: "a", answer: "a1"),
            Self.interaction(.post, "/p", body: "b", answer: "b1"),
            Self.interaction(.post, "/p", body: "a", answer: "a2"),
        ])
        let a = HTTP.Request(method: .post, target: "/p", body: Array("a".utf8))
        let b = HTTP.Request(method: .post, target: "/p", body: Array("b".utf8))
        #expect(index.play(a) == 0)
        #expect(index.play(b) == 1)
        #expect(index.play(a) == 2)
        #expect(index.play(b) == 1)
    }
}

@Suite("Redaction")
struct RedactorTests {
    @Test("credential headers lose their values; cookie names and attributes stay")
    func headers() {
        let headers = Redactor().redact(
            headers: HTTP.Headers([
                ("Authorization", "Bearer abc"), ("Cookie", "a=1; b=2"), ("Set-Cookie", "sid=xyz; Path=/; HttpOnly"),
                ("X-Api-Key", "k"), ("Accept", "*/*"),
            ]))
        #expect(
            headers.fields.map(\.value) == [
                "[REDACTED]", "a=[REDACTED]; b=[REDACTED]", "sid=[REDACTED]; Path=/; HttpOnly", "[REDACTED]", "*/*",
            ])
    }

    @Test("secret query parameters lose their values; the rest of the target is kept as sent")
    func query() {
        #expect(
            Redactor().redact(target: "/a?q=x%20y&api_key=123&Token=abc")
                == "/a?q=x%20y&api_key=[REDACTED]&Token=[REDACTED]")
        #expect(Redactor().redact(target: "/a?q=1") == "/a?q=1")
    }

    @Test("names can be added and kept")
    func configuration() {
        let redactor = Redactor().adding(headers: ["X-Session"], queryParameters: ["sid"], keeping: ["authorization"])
        let headers = redactor.redact(headers: HTTP.Headers([("Authorization", "Bearer abc"), ("X-Session", "s")]))
        #expect(headers.fields.map(\.value) == ["Bearer abc", "[REDACTED]"])
        #expect(redactor.redact(target: "/?sid=1") == "/?sid=[REDACTED]")
    }
}
