import Foundation
import KakapoCassette
import KakapoHTTP
import KakapoJSON
import Testing

/// HTTP dates and ISO 8601 times read and written by hand, and how a replay moves a recording's times.
@Suite("Replayed time")
struct ReplayTimeTests {
    @Test("HTTP dates: the three forms of RFC 9110 and the cookie form read alike; IMF-fixdate is written")
    func httpDates() {
        let seconds: Int64 = 784_111_777  // Sun, 06 Nov 1994 08:49:37 GMT
        #expect(HTTPDate.parse("Sun, 06 Nov 1994 08:49:37 GMT") == seconds)
        #expect(HTTPDate.parse("Sunday, 06-Nov-94 08:49:37 GMT") == seconds)
        #expect(HTTPDate.parse("Sun Nov  6 08:49:37 1994") == seconds)
        #expect(HTTPDate.parse("Sun, 06-Nov-1994 08:49:37 GMT") == seconds)
        #expect(HTTPDate.format(seconds) == "Sun, 06 Nov 1994 08:49:37 GMT")
        for text in [
            "0", "-1", "", "120", "Sun, 32 Nov 1994 08:49:37 GMT", "Sun, 06 Foo 1994 08:49:37 GMT",
            "Sun, 06 Nov 1994 25:49:37 GMT", "Sun, 06 Nov 1994 08:49:37 PST", String(repeating: "1 ", count: 100),
        ] {
            #expect(HTTPDate.parse(text) == nil, "\(text)")
        }
        // Every day of four centuries round-trips, against Foundation's calendar.
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        var day: Int64 = -5_000
        while day < 150_000 {
            let seconds = day * 86_400 + 3_723
            let text = HTTPDate.format(seconds)
            #expect(text == formatter.string(from: Date(timeIntervalSince1970: TimeInterval(seconds))))
            #expect(HTTPDate.parse(text) == seconds)
            day += 97
        }
        #expect(HTTPDate.format(.max) == HTTPDate.format(HTTPDate.latest))
    }

    @Test("ISO 8601 times keep their layout when moved: fraction, separator, zone")
    func isoTimes() throws {
        let z = try #require(ISOTime.parse("2026-11-01T10:00:00Z"))
        #expect(z.moved(by: 172_800).text == "2026-11-03T10:00:00Z")
        let fraction = try #require(ISOTime.parse("2026-11-01T10:00:00.123456+01:00"))
        #expect(fraction.seconds == z.seconds - 3_600)
        #expect(fraction.moved(by: 60).text == "2026-11-01T10:01:00.123456+01:00")
        #expect(ISOTime.parse("2026-11-01 10:00")?.moved(by: 3_600).text == "2026-11-01 11:00")
        #expect(ISOTime.parse("2026-11-01T10:00:00-0530")?.text == "2026-11-01T10:00:00-0530")
        for text in ["2026-11-01", "2026-13-01T10:00:00Z", "2026-11-01T10:00:00Q", "2026-11-01T10:00:00.Z", "x"] {
            #expect(ISOTime.parse(text) == nil, "\(text)")
        }
    }

    @Test("volatile shapes: UUIDs, times near sending, epoch times, long nonces; not words, ids or old dates")
    func shapes() {
        let now: Int64 = 1_795_000_000
        #expect(ValueShape.of("0b9d7c1e-3f7a-4c52-9e1a-5c3d2b1a0f9e", sentAt: now) == .uuid)
        #expect(ValueShape.of(ISOTime(seconds: now - 30).text, sentAt: now) == .time)
        #expect(ValueShape.of(ISOTime(seconds: now - 200_000).text, sentAt: now) == nil)
        #expect(ValueShape.of(String(now + 5), sentAt: now) == .epochSeconds)
        #expect(ValueShape.of(String(now * 1_000 + 5), sentAt: now) == .epochMilliseconds)
        #expect(ValueShape.of("1234567890", sentAt: now) == nil)
        #expect(ValueShape.of("9f86d081884c7d659a2feaa0c55ad015", sentAt: now) == .hex(32))
        #expect(ValueShape.of("dGhpcyBpcyBhIG5vbmNlMTIz", sentAt: now) == .base64(24))
        for text in ["x", "hello-world-again", "aaaaaaaaaaaaaaaaaaaa", "12345678901234567", "user_profile_settings"] {
            #expect(ValueShape.of(text, sentAt: now) == nil, "\(text)")
        }
    }

    @Test("a replay moves Date to now and the other dates by as much; Max-Age, delays and bodies stay")
    func movedHeaders() throws {
        let headers: HTTP.Headers = [
            "Date": "Sun, 01 Nov 2026 10:00:00 GMT", "Expires": "Sun, 01 Nov 2026 11:00:00 GMT",
            "Retry-After": "120", "Last-Modified": "Sat, 31 Oct 2026 10:00:00 GMT",
            "Set-Cookie": "sid=1; expires=Sun, 01 Nov 2026 11:00:00 GMT; Max-Age=3600; Path=/",
            "X-Other": "Sun, 01 Nov 2026 10:00:00 GMT",
        ]
        let now = try #require(HTTPDate.parse("Tue, 03 Nov 2026 12:00:00 GMT"))
        let moved = try #require(
            ReplayTime().moved(headers: headers, body: Array("{\"at\": 1}".utf8), recordedAt: "", now: now))
        #expect(moved.headers["Date"] == "Tue, 03 Nov 2026 12:00:00 GMT")
        #expect(moved.headers["Expires"] == "Tue, 03 Nov 2026 13:00:00 GMT")
        #expect(moved.headers["Retry-After"] == "120")
        #expect(moved.headers["Last-Modified"] == "Mon, 02 Nov 2026 12:00:00 GMT")
        #expect(moved.headers["Set-Cookie"] == "sid=1; expires=Tue, 03 Nov 2026 13:00:00 GMT; Max-Age=3600; Path=/")
        #expect(moved.headers["X-Other"] == "Sun, 01 Nov 2026 10:00:00 GMT")
        #expect(moved.body == nil)
        #expect(ReplayTime(keepsTime: true).moved(headers: headers, body: nil, recordedAt: "", now: now) == nil)
        #expect(ReplayTime().moved(headers: ["Content-Type": "text/plain"], body: nil, recordedAt: "", now: now) == nil)
    }

    @Test("without a Date the time of recording is the measure; JSON pointers with * move times in bodies")
    func movedBody() throws {
        let time = ReplayTime(jsonPointers: [JSONPointer("/items/*/at")!, JSONPointer("/exp")!, JSONPointer("/ms")!])
        let body =
            #"{"items": [{"at": "2026-11-01T11:00:00.5Z", "n": "2026-11-01T11:00:00Z"}, {"at": "2026-11-01 09:00"}], "exp": 1793530800, "ms": "1793530800000", "other": 1793530800}"#
        let now = try #require(ISOTime.parse("2026-11-02T10:00:00Z")).seconds
        let moved = try #require(
            time.moved(
                headers: ["Expires": "Sun, 01 Nov 2026 11:00:00 GMT"], body: Array(body.utf8),
                recordedAt: "2026-11-01T10:00:00.000Z", now: now))
        #expect(moved.headers["Expires"] == "Mon, 02 Nov 2026 11:00:00 GMT")
        let json = try JSONParser.parse(try #require(moved.body))
        func at(_ pointer: String) -> JSONValue? { json[pointer: JSONPointer(pointer)!] }
        #expect(at("/items/0/at") == "2026-11-02T11:00:00.5Z")
        #expect(at("/items/0/n") == "2026-11-01T11:00:00Z")
        #expect(at("/items/1/at") == "2026-11-02 09:00")
        #expect(json["exp"] == .number(JSONNumber(1_793_617_200)))
        #expect(json["ms"] == "1793617200000")
        #expect(json["other"] == .number(JSONNumber(1_793_530_800)))
    }
}
