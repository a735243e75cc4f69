import KakapoCassette
import KakapoHTTP
import Testing

@Suite("Representation matching")
struct RepresentationMatchingTests {
    static func get(_ target: String = "/object", _ headers: [(String, String)] = []) -> HTTP.Request {
        HTTP.Request(method: .get, target: target, headers: HTTP.Headers(headers))
    }

    static func recording(
        _ request: HTTP.Request, status: Int = 200, headers: [(String, String)] = [], body: String = "x"
    ) -> Interaction {
        Interaction(
            request: request,
            response: HTTP.Response(status: status, headers: HTTP.Headers(headers), body: Array(body.utf8)),
            recordedAt: "", durationMilliseconds: 0)
    }

    static func index(_ interactions: [Interaction], matching: MatchOptions = MatchOptions()) -> InteractionIndex {
        var index = InteractionIndex(matching: matching, repeatPolicy: .miss)
        for (position, interaction) in interactions.enumerated() { index.insert(interaction, at: position) }
        return index
    }

    static func ranged(_ range: String) -> HTTP.Request { get("/object", [("Range", range)]) }

    /// Four ranges recorded in the order a parallel download finished them, and a whole-object GET.
    static let ranges = ["bytes=8-11", "bytes=0-3", "bytes=12-15", "bytes=4-7"]
    static var rangedCassette: [Interaction] {
        ranges.map { recording(ranged($0), status: 206, body: $0) } + [recording(get(), body: "whole")]
    }

    @Test("each range gets its own recording, whatever order the ranges are asked in")
    func rangesAreTheirOwnRequests() {
        var index = Self.index(Self.rangedCassette)
        #expect(index.play(Self.ranged("bytes=0-3")) == 1)
        #expect(index.play(Self.ranged("bytes=4-7")) == 3)
        #expect(index.play(Self.ranged("bytes=12-15")) == 2)
        #expect(index.play(Self.ranged("bytes=8-11")) == 0)
        #expect(index.play(Self.get()) == 4)
    }

    @Test("a range never recorded misses, and a whole-body request never gets a 206")
    func otherRangesMiss() {
        var index = Self.index(Array(Self.rangedCassette.prefix(4)))
        #expect(index.play(Self.ranged("bytes=0-7")) == nil)
        #expect(index.play(Self.get()) == nil)
        var whole = Self.index([Self.recording(Self.get(), body: "whole")])
        #expect(whole.play(Self.ranged("bytes=0-3")) == nil)
        #expect(whole.play(Self.get()) == 0)
    }

    @Test("spaces inside Range do not matter; a 200 recorded for a Range answers that Range")
    func rangeSpellingAndIgnoredRanges() {
        var index = Self.index([Self.recording(Self.ranged("bytes=0-3, 8-9"), status: 200, body: "whole")])
        #expect(index.play(Self.ranged("bytes=0-3,8-9")) == 0)
    }

    @Test("repeats of one range still play in recorded order")
    func repeatedRange() {
        var index = Self.index([
            Self.recording(Self.ranged("bytes=0-3"), status: 206, body: "a1"),
            Self.recording(Self.ranged("bytes=4-7"), status: 206, body: "b"),
            Self.recording(Self.ranged("bytes=0-3"), status: 206, body: "a2"),
        ])
        #expect(index.play(Self.ranged("bytes=0-3")) == 0)
        #expect(index.play(Self.ranged("bytes=0-3")) == 2)
        #expect(index.play(Self.ranged("bytes=4-7")) == 1)
        #expect(index.play(Self.ranged("bytes=0-3")) == nil)
    }

    @Test("If-Range is matched along with Range")
    func ifRange() {
        var index = Self.index([
            Self.recording(Self.get("/object", [("Range", "bytes=0-3"), ("If-Range", "\"A\"")]), status: 206)
        ])
        #expect(index.play(Self.get("/object", [("Range", "bytes=0-3"), ("If-Range", "\"B\"")])) == nil)
        #expect(index.play(Self.ranged("bytes=0-3")) == nil)
        #expect(index.play(Self.get("/object", [("Range", "bytes=0-3"), ("If-Range", "\"A\"")])) == 0)
    }

    @Test("--no-match-range plays ranges in recorded order, as before")
    func rangesNotMatched() {
        var matching = MatchOptions()
        matching.matchRange = false
        var index = Self.index(Self.rangedCassette, matching: matching)
        #expect(index.play(Self.ranged("bytes=0-3")) == 0)
        #expect(index.play(Self.get()) == 1)
    }

    @Test("a 304 answers only the validator it was recorded for, never a request without one")
    func notModified() {
        let cassette = [
            Self.recording(Self.get(), headers: [("ETag", "\"A\"")], body: "full"),
            Self.recording(Self.get("/object", [("If-None-Match", "\"A\"")]), status: 304, body: ""),
        ]
        var index = Self.index(cassette)
        #expect(index.play(Self.get("/object", [("If-None-Match", "\"B\"")])) == 0)
        #expect(index.play(Self.get("/object", [("If-None-Match", "\"A\"")])) == 1)
        var fresh = Self.index(Array(cassette.suffix(1)))
        #expect(fresh.play(Self.get()) == nil)
        #expect(fresh.play(Self.get("/object", [("If-None-Match", "\"B\"")])) == nil)
        #expect(fresh.play(Self.get("/object", [("If-Modified-Since", "Tue, 01 Dec 2026 00:00:00 GMT")])) == nil)
        #expect(fresh.play(Self.get("/object", [("If-None-Match", "\"A\"")])) == 0)
    }

    @Test(
        "If-Modified-Since is a validator of a 304 too (any date while dates move with the clock); --no-match-conditional turns the rule off"
    )
    func modifiedSince() {
        let date = "Tue, 01 Dec 2026 00:00:00 GMT"
        let cassette = [Self.recording(Self.get("/object", [("If-Modified-Since", date)]), status: 304, body: "")]
        var kept = MatchOptions()
        kept.datesMoveWithClock = false
        var index = Self.index(cassette, matching: kept)
        #expect(index.play(Self.get("/object", [("If-Modified-Since", "Wed, 02 Dec 2026 00:00:00 GMT")])) == nil)
        #expect(index.play(Self.get("/object", [("If-Modified-Since", date)])) == 0)
        var moving = Self.index(cassette)
        #expect(moving.play(Self.get("/object", [("If-Modified-Since", "Wed, 02 Dec 2026 00:00:00 GMT")])) == 0)
        #expect(moving.play(Self.get("/object", [("If-None-Match", "\"A\"")])) == nil)
        var matching = MatchOptions()
        matching.matchConditional = false
        var loose = Self.index(cassette, matching: matching)
        #expect(loose.play(Self.get()) == 0)
    }

    @Test("a response's Vary makes the headers it names part of the match")
    func vary() {
        let cassette = [
            Self.recording(
                Self.get("/report", [("Accept", "application/json")]),
                headers: [("Vary", "Accept, Accept-Language")], body: "{}"),
            Self.recording(
                Self.get("/report", [("Accept", "text/csv")]), headers: [("Vary", "accept, accept-language")],
                body: "a,b"),
        ]
        var index = Self.index(cassette)
        #expect(index.play(Self.get("/report", [("Accept", "text/csv")])) == 1)
        #expect(index.play(Self.get("/report", [("Accept", "application/json")])) == 0)
        #expect(index.play(Self.get("/report", [("Accept", "application/json"), ("Accept-Language", "fr")])) == nil)
        #expect(index.play(Self.get("/report")) == nil)
        var matching = MatchOptions()
        matching.matchVary = false
        var loose = Self.index(cassette, matching: matching)
        #expect(loose.play(Self.get("/report", [("Accept", "text/csv")])) == 0)
    }

    @Test("Vary: * and secret headers in Vary are not matched")
    func varyStarAndSecrets() {
        var index = Self.index([
            Self.recording(
                Self.get("/me", [("Authorization", "Bearer a"), ("X-Trace", "1")]),
                headers: [("Vary", "*"), ("Vary", "Authorization, Cookie")])
        ])
        #expect(index.play(Self.get("/me", [("Authorization", "Bearer b")])) == 0)
    }

    @Test("an encoded recording answers only a request that accepts its coding")
    func contentCoding() {
        let cassette = [
            Self.recording(
                Self.get("/page", [("Accept-Encoding", "gzip, br")]),
                headers: [("Content-Encoding", "br"), ("Vary", "Accept-Encoding")])
        ]
        var index = Self.index(cassette)
        #expect(index.play(Self.get("/page")) == nil)
        #expect(index.play(Self.get("/page", [("Accept-Encoding", "gzip, deflate")])) == nil)
        #expect(index.play(Self.get("/page", [("Accept-Encoding", "gzip;q=1, br;q=0")])) == nil)
        #expect(index.play(Self.get("/page", [("Accept-Encoding", "*")])) == 0)
        var again = Self.index(cassette)
        #expect(again.play(Self.get("/page", [("Accept-Encoding", "br;q=0.5, zstd")])) == 0)
        var matching = MatchOptions()
        matching.matchVary = false
        var loose = Self.index(cassette, matching: matching)
        #expect(loose.play(Self.get("/page")) == 0)
    }

    @Test("a coding the recorded request did not ask for either still replays, as it was recorded")
    func unaskedCoding() {
        var index = Self.index([Self.recording(Self.get("/page"), headers: [("Content-Encoding", "gzip")])])
        #expect(index.play(Self.get("/page")) == 0)
    }

    @Test("a gzip, deflate, br or zstd recording answers a client that does not accept it, decoded")
    func decodableCodingIsDecoded() throws {
        let text = Array(String(repeating: "kakapo ", count: 40).utf8)
        for coding in ContentCoding.allCases {
            let recorded = Self.get("/page", [("Accept-Encoding", "gzip, deflate, br, zstd")])
            let response = HTTP.Response(
                status: 200,
                headers: ["Content-Encoding": coding.rawValue, "Content-Length": "\(coding.encode(text).count)"],
                body: coding.encode(text))
            var index = Self.index([
                Interaction(request: recorded, response: response, recordedAt: "", durationMilliseconds: 0)
            ])
            let plain = Self.get("/page")
            #expect(index.play(plain) == 0, "\(coding)")
            let identity = try #require(ContentCoding.identityResponse(response, for: plain, recorded: recorded))
            #expect(identity.body == text)
            #expect(identity.headers["Content-Encoding"] == nil)
            #expect(identity.headers["Content-Length"] == "\(text.count)")
            // A client that accepts the coding, and one the server sent it to unasked, get the recorded bytes.
            #expect(ContentCoding.identityResponse(response, for: recorded, recorded: recorded) == nil)
            #expect(ContentCoding.identityResponse(response, for: plain, recorded: plain) == nil)
            #expect(
                ContentCoding.identityResponse(
                    response, for: Self.get("/page", [("Accept-Encoding", "\(coding.rawValue);q=0")]),
                    recorded: recorded) != nil)
        }
    }

    @Test("a HEAD is still answered from the GET recording")
    func headFromGet() {
        var index = Self.index([
            Self.recording(
                Self.get("/page", [("Accept-Encoding", "gzip")]), headers: [("Content-Encoding", "gzip")])
        ])
        #expect(index.play(HTTP.Request(method: .head, target: "/page")) == 0)
        #expect(index.play(HTTP.Request(method: .head, target: "/page", headers: ["Range": "bytes=0-1"])) == nil)
    }

    @Test("a miss report names the range, the validator, the varied header and the coding")
    func missReport() {
        let cassette = Cassette(interactions: [
            Self.recording(Self.ranged("bytes=8388608-16777215"), status: 206),
            Self.recording(Self.get("/etag", [("If-None-Match", "\"A\"")]), status: 304, body: ""),
            Self.recording(
                Self.get("/report", [("Accept", "application/json")]), headers: [("Vary", "Accept")], body: "{}"),
            Self.recording(
                Self.get("/page", [("Accept-Encoding", "br")]), headers: [("Content-Encoding", "br")]),
        ])
        func differences(_ request: HTTP.Request) -> [String] {
            MissReport(request: request, cassette: cassette, redactor: Redactor()).nearest.first?.differences ?? []
        }
        #expect(
            differences(Self.ranged("bytes=0-4194303")) == [
                "header range: bytes=0-4194303 here, bytes=8388608-16777215 recorded"
            ])
        #expect(differences(Self.get()) == ["header range: absent here, bytes=8388608-16777215 recorded"])
        #expect(
            differences(Self.get("/etag", [("If-None-Match", "\"B\"")])) == [
                "header if-none-match: \"B\" here, \"A\" recorded (the recording is a 304 for that validator)"
            ])
        #expect(
            differences(Self.get("/report", [("Accept", "text/csv")])) == [
                "header accept: text/csv here, application/json recorded (the response varies by it)"
            ])
        #expect(
            differences(Self.get("/page")) == [
                "header accept-encoding: absent here, br recorded (the recorded response is br-encoded)"
            ])
    }
}
