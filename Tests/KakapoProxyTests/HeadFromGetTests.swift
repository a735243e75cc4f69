import Foundation
import Kakapo
import KakapoTestSupport
import Synchronization
import Testing

/// A `HEAD` on a path recorded only as `GET` is answered from the `GET` recording, head only, as servers
/// do; checked with `curl -I` against a replaying proxy.
@Suite("HEAD from GET")
struct HeadFromGetTests {
    /// Answers `/doc` with a body, `/both` saying which method asked, `/seq` with a counter.
    static func upstream() async throws -> TestUpstream {
        let counter = Counter()
        return try await TestUpstream.start { request in
            switch request.path {
            case "/both":
                return .response(
                    HTTP.Response(
                        status: 200, headers: ["X-Method": request.method.rawValue, "Content-Type": "text/plain"],
                        body: Array("both".utf8)))
            case "/seq":
                return .response(HTTP.Response(status: 200, contentType: "text/plain", text: "seq \(counter.next())"))
            default:
                return .response(
                    HTTP.Response(
                        status: 200, headers: ["Content-Type": "text/plain", "ETag": "\"v1\""],
                        body: Array("hello doc".utf8)))
            }
        }
    }

    final class Counter: Sendable {
        private let value = Mutex(0)
        func next() -> Int {
            value.withLock {
                $0 += 1; return $0
            }
        }
    }

    /// Records `GET /doc`, `HEAD /both`, `GET /both` and `GET /seq` twice.
    static func record(into cassette: String) async throws {
        let upstream = try await Self.upstream()
        let recorder = try await ProxyHarness.recording(upstream, cassette: cassette)
        for (method, target) in [
            (HTTP.Method.get, "/doc"), (.head, "/both"), (.get, "/both"), (.get, "/seq"), (.get, "/seq"),
        ] {
            let answer = try await recorder.client.send(method, target)
            #expect(answer.status == 200, "\(method) \(target)")
        }
        await recorder.stop()
        await upstream.stop()
    }

    /// `curl -I` (or a plain GET) against Kakapo on `port`: status, lowercased header lines, body.
    static func curl(port: Int, _ target: String, head: Bool) async throws -> (
        status: Int, headers: [String: String], body: String
    ) {
        try await CurlCall.run([head ? "--head" : "--include", "http://127.0.0.1:\(port)" + target])
    }

    @Test(
        "HEAD on a GET recording answers its status and headers with the recorded length, no body, from cassette-head")
    func headFromGet() async throws {
        let cassette = try Fixtures.temporaryDirectory() + "/head.json"
        try await Self.record(into: cassette)
        let replay = try await ProxyHarness.replaying(cassette)
        let head = try await Self.curl(port: replay.port, "/doc", head: true)
        #expect(head.status == 200, "\(head)")
        #expect(head.headers["x-kakapo-source"] == "cassette-head", "\(head)")
        #expect(head.headers["content-length"] == "9" && head.headers["etag"] == "\"v1\"", "\(head)")
        #expect(head.body.isEmpty, "\(head)")
        // An exact HEAD recording still wins.
        let both = try await Self.curl(port: replay.port, "/both", head: true)
        #expect(both.headers["x-kakapo-source"] == "cassette" && both.headers["x-method"] == "HEAD", "\(both)")
        // The GET itself replays as before.
        let get = try await Self.curl(port: replay.port, "/doc", head: false)
        #expect(get.status == 200 && get.headers["x-kakapo-source"] == "cassette" && get.body == "hello doc")
        let summary = await replay.stop()
        #expect(summary.counts[.cassetteHead] == 1 && summary.counts[.cassette] == 2, "\(summary.counts)")
        #expect(summary.text.contains("replayed 3, missed 0"), "\(summary.text)")
    }

    @Test("a HEAD from a gzip GET recording states the length the GET would send the same client")
    func headFromEncodedGet() async throws {
        let text = Array(String(repeating: "kakapo ", count: 50).utf8)
        let upstream = try await TestUpstream.start { _ in
            .response(
                HTTP.Response(
                    status: 200, headers: ["Content-Type": "text/plain", "Content-Encoding": "gzip"],
                    body: ContentCoding.gzip.encode(text)))
        }
        let cassette = try Fixtures.temporaryDirectory() + "/gzip.json"
        let recorder = try await ProxyHarness.recording(upstream, cassette: cassette)
        let recorded = try await recorder.client.send(.get, "/page", headers: ["Accept-Encoding": "gzip"])
        #expect(recorded.status == 200 && recorded.headers["Content-Encoding"] == "gzip")
        await recorder.stop()
        await upstream.stop()

        let replay = try await ProxyHarness.replaying(cassette)
        // curl without --compressed accepts no coding: the GET is decoded, and the HEAD says so.
        let get = try await Self.curl(port: replay.port, "/page", head: false)
        #expect(get.headers["content-encoding"] == nil && get.body == String(decoding: text, as: UTF8.self))
        #expect(get.headers["content-length"] == "\(text.count)", "\(get.headers)")
        let head = try await Self.curl(port: replay.port, "/page", head: true)
        #expect(head.headers["x-kakapo-source"] == "cassette-head", "\(head)")
        #expect(head.headers["content-encoding"] == nil, "\(head)")
        #expect(head.headers["content-length"] == "\(text.count)", "\(head)")
        // A client that accepts gzip gets the recorded head.
        let encoded = try await CurlCall.run(["--head", "--compressed", "http://127.0.0.1:\(replay.port)/page"])
        #expect(encoded.headers["content-encoding"] == "gzip", "\(encoded)")
        #expect(encoded.headers["content-length"] != "\(text.count)", "\(encoded)")
        _ = await replay.stop()
    }

    @Test(
        "a HEAD marks its GET recording used without taking it from the next GET; in once mode it misses after the last"
    )
    func headBookkeeping() async throws {
        let cassette = try Fixtures.temporaryDirectory() + "/head.json"
        try await Self.record(into: cassette)
        let replay = try await ProxyHarness.replaying(cassette, repeatPolicy: .miss)
        let head = try await Self.curl(port: replay.port, "/doc", head: true)
        #expect(head.headers["x-kakapo-source"] == "cassette-head", "\(head)")
        // HEAD before GET: the GETs still get the first, then the second recording.
        let peek = try await Self.curl(port: replay.port, "/seq", head: true)
        #expect(peek.headers["x-kakapo-source"] == "cassette-head" && peek.headers["content-length"] == "5")
        let first = try await Self.curl(port: replay.port, "/seq", head: false)
        #expect(first.body == "seq 1", "\(first)")
        let second = try await Self.curl(port: replay.port, "/seq", head: false)
        #expect(second.body == "seq 2", "\(second)")
        // Every GET recording played in once mode: the HEAD misses as the GET would.
        let after = try await Self.curl(port: replay.port, "/seq", head: true)
        #expect(after.status == 404 && after.headers["x-kakapo-source"] == "miss", "\(after)")
        let summary = await replay.stop()
        // GET /doc was answered to a HEAD only, and counts as used; only the GET /both recording was not.
        #expect(summary.unused.count == 2 && summary.unused.allSatisfy { $0.contains("/both") }, "\(summary.unused)")
    }
}
