import Foundation
import Kakapo
import KakapoTestSupport
import Testing

/// Record through the proxy from a real local upstream, switch the upstream off, replay.
@Suite("Record and replay")
struct RecordReplayTests {
    /// The upstream's answers, by path.
    static func upstreamReply(_ request: HTTP.Request) -> TestUpstream.Reply {
        switch request.path {
        case "/json":
            return .response(
                HTTP.Response(status: 200, contentType: "application/json", text: #"{"id":1,"name":"Ada"}"#))
        case "/text":
            return .response(
                HTTP.Response(status: 200, contentType: "text/plain; charset=utf-8", text: "hello\nworld ✓\n"))
        case "/binary":
            return .response(
                HTTP.Response(status: 200, headers: ["Content-Type": "application/octet-stream"], body: Fixtures.binary)
            )
        case "/items/1":
            return .response(HTTP.Response(status: 204, headers: ["X-Deleted": "1"]))
        case "/redirect":
            return .response(HTTP.Response(status: 302, headers: ["Location": "/elsewhere"], body: Array("moved".utf8)))
        case "/gzip":
            return .response(
                HTTP.Response(
                    status: 200, headers: ["Content-Type": "application/json", "Content-Encoding": "gzip"],
                    body: Fixtures.gzipJSON))
        case "/cookies":
            return .response(
                HTTP.Response(
                    status: 200,
                    headers: HTTP.Headers([
                        ("Set-Cookie", "session=abc123; Path=/; HttpOnly"), ("Content-Type", "text/plain"),
                        ("Set-Cookie", "theme=dark; Path=/"),
                    ]), body: Array("two cookies".utf8)))
        case "/large":
            return .response(
                HTTP.Response(
                    status: 200, headers: ["Content-Type": "application/octet-stream"], body: Fixtures.large(10_000_000)
                ))
        case "/chunked":
            return .chunked(
                status: 200, headers: ["Content-Type": "text/plain"],
                chunks: [Array("first,".utf8), Array("second,".utf8), Array("third".utf8)])
        case "/echo":
            return .response(
                HTTP.Response(status: 201, headers: ["Content-Type": "application/json"], body: request.body))
        default:
            return .response(
                HTTP.Response(status: 404, contentType: "text/plain", text: "upstream has no \(request.path)"))
        }
    }

    struct Exchange: Sendable {
        let method: HTTP.Method
        let target: String
        var headers: HTTP.Headers = HTTP.Headers()
        var body: [UInt8] = []
    }

    static let exchanges: [Exchange] = [
        Exchange(method: .get, target: "/json"),
        Exchange(method: .get, target: "/text"),
        Exchange(method: .get, target: "/binary"),
        Exchange(method: .delete, target: "/items/1"),
        Exchange(method: .get, target: "/redirect"),
        Exchange(method: .head, target: "/json"),
        Exchange(method: .get, target: "/gzip", headers: ["Accept-Encoding": "gzip"]),
        Exchange(method: .get, target: "/cookies"),
        Exchange(method: .get, target: "/large"),
        Exchange(method: .get, target: "/chunked"),
        Exchange(
            method: .post, target: "/echo", headers: ["Content-Type": "application/json"],
            body: Array(#"{"name":"Grace","tags":["a","b"]}"#.utf8)),
    ]

    @Test("replays JSON, text, binary, 204, 302, HEAD, gzip, cookies, 10 MB and chunked answers exactly")
    func recordThenReplay() async throws {
        let directory = try Fixtures.temporaryDirectory()
        let cassette = directory + "/api.json"
        let upstream = try await TestUpstream.start(Self.upstreamReply)

        let keepCookies = Redactor().adding(headers: [], queryParameters: [], keeping: ["set-cookie"])
        let recorder = try await ProxyHarness.recording(upstream, cassette: cassette, redactor: keepCookies)
        var recorded: [HTTP.Response] = []
        for exchange in Self.exchanges {
            let response = try await recorder.client.send(
                exchange.method, exchange.target, headers: exchange.headers, body: exchange.body)
            #expect(response.source == "upstream", "\(exchange.target)")
            recorded.append(response)
        }
        let summary = await recorder.stop()
        #expect(summary.recorded == Self.exchanges.count)
        await upstream.stop()

        // What went through the proxy is what the upstream sent.
        #expect(recorded[0].text == #"{"id":1,"name":"Ada"}"#)
        #expect(recorded[2].body == Fixtures.binary)
        #expect(recorded[3].status == 204 && recorded[3].body.isEmpty)
        #expect(recorded[4].status == 302 && recorded[4].headers["Location"] == "/elsewhere")
        #expect(!upstream.received.contains { $0.path == "/elsewhere" }, "a redirect must not be followed")
        #expect(recorded[5].body.isEmpty && recorded[5].headers["Content-Length"] == "21")
        #expect(recorded[6].body == Fixtures.gzipJSON && recorded[6].headers["Content-Encoding"] == "gzip")
        #expect(
            recorded[7].headers.values(for: "Set-Cookie") == ["session=abc123; Path=/; HttpOnly", "theme=dark; Path=/"])
        #expect(recorded[8].body == Fixtures.large(10_000_000))
        #expect(recorded[9].text == "first,second,third")
        #expect(recorded[9].headers["Transfer-Encoding"] == nil)
        #expect(recorded[10].status == 201 && recorded[10].body == Self.exchanges[10].body)

        // Replay with the upstream gone: every answer is identical.
        let player = try await ProxyHarness.replaying(cassette)
        for (exchange, original) in zip(Self.exchanges, recorded) {
            let replayed = try await player.client.send(
                exchange.method, exchange.target, headers: exchange.headers, body: exchange.body)
            #expect(replayed.source == "cassette", "\(exchange.method) \(exchange.target)")
            #expect(replayed.status == original.status, "\(exchange.method) \(exchange.target)")
            if let coding = ContentCoding(header: original.headers["Content-Encoding"]) {
                // Compressed bodies are stored decoded and compressed again: the content is identical,
                // the compressed bytes (and so their length) may differ.
                #expect(replayed.headers["Content-Encoding"] == original.headers["Content-Encoding"])
                #expect(coding.decode(replayed.body) == coding.decode(original.body))
                #expect(coding.decode(replayed.body) == Array(#"{"compressed":true,"items":[1,2,3]}"#.utf8))
                continue
            }
            // Framing aside: a chunked answer streams through while recording (no length) and replays with
            // its length.
            func endToEnd(_ response: HTTP.Response) -> [HTTP.Headers.Field] {
                response.headersWithoutSource.filter { !$0.name.caseInsensitiveEquals("Content-Length") }
            }
            #expect(endToEnd(replayed) == endToEnd(original), "\(exchange.method) \(exchange.target)")
            if exchange.method != .head && original.status != 204 && original.status != 304 {
                #expect(replayed.headers["Content-Length"] == String(replayed.body.count))
            }
            #expect(replayed.body == original.body, "\(exchange.method) \(exchange.target)")
        }
        let replaySummary = await player.stop()
        #expect(replaySummary.counts[.cassette] == Self.exchanges.count)
        #expect(replaySummary.counts[.miss] == nil)
    }

    @Test("records the request as sent upstream: Host names the upstream, hop-by-hop headers are gone")
    func recordsRequestAsSent() async throws {
        let directory = try Fixtures.temporaryDirectory()
        let cassette = directory + "/api.json"
        let upstream = try await TestUpstream.start(Self.upstreamReply)
        let recorder = try await ProxyHarness.recording(upstream, cassette: cassette)
        _ = try await recorder.client.send(
            .get, "/json?page=2",
            headers: HTTP.Headers([
                ("X-Trace", "t1"), ("Connection", "X-Private"), ("X-Private", "hop"),
                ("Authorization", "Bearer s3cret"),
            ]))
        await recorder.stop()
        await upstream.stop()

        let sent = try #require(upstream.received.first)
        #expect(sent.headers["Host"] == "127.0.0.1:\(upstream.port)")
        #expect(sent.headers["X-Trace"] == "t1")
        #expect(sent.headers["X-Private"] == nil)
        #expect(sent.headers["Authorization"] == "Bearer s3cret", "the upstream gets the real credential")

        let interaction = try #require(try CassetteFile.load(cassette).interactions.first)
        #expect(interaction.request.target == "/json?page=2")
        #expect(interaction.request.headers["Host"] == "127.0.0.1:\(upstream.port)")
        #expect(interaction.request.headers["X-Private"] == nil)
        #expect(interaction.request.headers["Authorization"] == Redactor.placeholder)
        let text = try String(contentsOfFile: cassette, encoding: .utf8)
        #expect(!text.contains("s3cret"))
    }

    @Test("a POST with the same JSON in another key order replays the recording")
    func jsonBodyMatchesAsJSON() async throws {
        let directory = try Fixtures.temporaryDirectory()
        let cassette = directory + "/api.json"
        let upstream = try await TestUpstream.start(Self.upstreamReply)
        let recorder = try await ProxyHarness.recording(upstream, cassette: cassette)
        _ = try await recorder.client.send(.post, "/echo", body: Array(#"{"a":1,"b":[1,2]}"#.utf8))
        await recorder.stop()
        await upstream.stop()

        let player = try await ProxyHarness.replaying(cassette)
        let reordered = try await player.client.send(.post, "/echo", body: Array(#"{ "b": [1, 2], "a": 1.0 }"#.utf8))
        #expect(reordered.source == "cassette")
        #expect(reordered.text == #"{"a":1,"b":[1,2]}"#)
        let different = try await player.client.send(.post, "/echo", body: Array(#"{"a":2,"b":[1,2]}"#.utf8))
        #expect(different.status == 404)
        #expect(different.text.contains("body field /a differs"), "\(different.text)")
        await player.stop()
    }

    @Test("replay never rewrites the cassette")
    func replayLeavesFileAlone() async throws {
        let directory = try Fixtures.temporaryDirectory()
        let cassette = directory + "/api.json"
        let upstream = try await TestUpstream.start(Self.upstreamReply)
        let recorder = try await ProxyHarness.recording(upstream, cassette: cassette)
        _ = try await recorder.client.send(.get, "/json")
        await recorder.stop()
        await upstream.stop()
        let before = try Data(contentsOf: URL(fileURLWithPath: cassette))
        let attributes = try FileManager.default.attributesOfItem(atPath: cassette)

        let player = try await ProxyHarness.replaying(cassette)
        _ = try await player.client.send(.get, "/json")
        _ = try await player.client.send(.get, "/missing")
        await player.stop()
        #expect(try Data(contentsOf: URL(fileURLWithPath: cassette)) == before)
        #expect(
            try FileManager.default.attributesOfItem(atPath: cassette)[.modificationDate] as? Date
                == attributes[.modificationDate] as? Date)
    }
}
