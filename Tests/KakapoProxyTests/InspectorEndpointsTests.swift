import Foundation
import Kakapo
import KakapoTestSupport
import Testing

/// The inspector's data endpoints (a request's detail, save to cassette, the cassette view) and the page's
/// files, through real sockets against a real upstream.
@Suite("Inspector: detail, save and cassette endpoints")
struct InspectorEndpointsTests {
    /// `/login` echoes a JSON answer with a secret; `/image` answers PNG-typed bytes; `/ndjson` three lines
    /// 100 ms apart; anything else `{"path": ...}`.
    static func upstream() async throws -> TestUpstream {
        try await TestUpstream.start { request in
            switch request.path {
            case "/login":
                .response(
                    HTTP.Response(
                        status: 200, headers: ["Content-Type": "application/json"],
                        body: Array(#"{"name":"kea","password":"pw-from-upstream"}"#.utf8)))
            case "/image":
                .response(HTTP.Response(status: 200, headers: ["Content-Type": "image/png"], body: Fixtures.binary))
            case "/ndjson":
                .paced(
                    headers: ["Content-Type": "application/x-ndjson"],
                    chunks: (0..<3).map { Array("{\"n\":\($0)}\n".utf8) }, gap: 0.1)
            default:
                .response(
                    HTTP.Response(
                        status: 200, headers: ["Content-Type": "application/json"],
                        body: Array("{\"path\":\"\(request.path)\"}".utf8)))
            }
        }
    }

    /// The detail of the last journaled request whose target is `target`.
    static func detail(_ harness: ProxyHarness, _ target: String) async throws -> JSONValue {
        var id: Int?
        for _ in 0..<100 where id == nil {
            let journal = try JSONParser.parse(try await harness.client.send(.get, "/__kakapo/requests").body)
            id =
                journal["requests"]?.arrayValue?.last { $0["url"]?.stringValue == target }?["id"]?.numberValue?
                .intValue
        }
        let found = try #require(id, "\(target) is not in the journal")
        let answer = try await harness.client.send(.get, "/__kakapo/requests/\(found)")
        #expect(answer.status == 200, "\(answer.text)")
        return try JSONParser.parse(answer.body)
    }

    static func header(_ name: String, in message: JSONValue?) -> String? {
        message?["headers"]?.arrayValue?.first { $0.arrayValue?.first?.stringValue == name }?.arrayValue?.last?
            .stringValue
    }

    @Test("a request's detail shows its headers and bodies redacted as a cassette would, a binary body as base64")
    func redactedDetail() async throws {
        let upstream = try await Self.upstream()
        let harness = try await ProxyHarness.start(
            ProxyConfiguration(mode: .passthrough, upstream: UpstreamConfiguration(baseURL: upstream.baseURL)))
        defer { Task { await harness.stop() } }
        _ = try await harness.client.send(
            .post, "/login",
            headers: ["Authorization": "Bearer secret-token-123", "Content-Type": "application/json"],
            body: Array(#"{"user":"kea","password":"hunter2"}"#.utf8))
        let login = try await Self.detail(harness, "/login")
        #expect(login["source"] == "upstream")
        #expect(login["request"]?["method"] == "POST")
        let authorization = try #require(Self.header("Authorization", in: login["request"]))
        #expect(!authorization.contains("secret-token-123") && authorization.contains("[REDACTED]"))
        let sent = try #require(login["request"]?["body"]?["text"]?.stringValue)
        #expect(sent.contains("kea") && !sent.contains("hunter2"), "\(sent)")
        #expect(login["request"]?["body"]?["size"] == 35)
        let answered = try #require(login["response"]?["body"]?["text"]?.stringValue)
        #expect(answered.contains("kea") && !answered.contains("pw-from-upstream"), "\(answered)")
        #expect(login["response"]?["status"] == 200)
        #expect(login["canSave"] == false)
        #expect(login["cannotSave"]?.stringValue?.contains("--cassette") == true)

        _ = try await harness.client.send(.get, "/image")
        let image = try await Self.detail(harness, "/image")
        let body = try #require(image["response"]?["body"])
        #expect(body["size"] == 512 && body["kept"] == 512 && body["truncated"] == false)
        #expect(body["text"] == nil)
        #expect(body["base64"]?.stringValue.flatMap { Data(base64Encoded: $0) }.map { Array($0) } == Fixtures.binary)

        let gone = try await harness.client.send(.get, "/__kakapo/requests/999999")
        #expect(gone.status == 404)
        #expect(try JSONParser.parse(gone.body)["error"]?.stringValue?.contains("no longer held") == true)
        let unknown = try await harness.client.send(.get, "/__kakapo/nothing")
        #expect(unknown.text.contains("GET /__kakapo/events") && unknown.text.contains("GET /__kakapo/cassette"))
    }

    @Test("a replayed stream shows its chunks with offsets; a miss its nearest recording, field by field")
    func streamAndMiss() async throws {
        let cassette = try Fixtures.temporaryDirectory() + "/api.json"
        let upstream = try await Self.upstream()
        let recorder = try await ProxyHarness.recording(upstream, cassette: cassette)
        #expect(try await recorder.client.send(.get, "/ndjson").status == 200)
        #expect(try await recorder.client.send(.get, "/users?page=1").status == 200)
        _ = try await recorder.client.send(
            .post, "/search", headers: ["Content-Type": "application/json"],
            body: Array(#"{"user":{"name":"a","age":3}}"#.utf8))
        let recordedSearch = try await Self.detail(recorder, "/search")
        #expect(recordedSearch["source"] == "recorded")
        #expect(recordedSearch["cannotSave"]?.stringValue?.contains("already recorded") == true)
        await recorder.stop()
        await upstream.stop()

        let replay = try await ProxyHarness.replaying(cassette)
        defer { Task { await replay.stop() } }
        #expect(try await replay.client.send(.get, "/ndjson").text == "{\"n\":0}\n{\"n\":1}\n{\"n\":2}\n")
        let stream = try await Self.detail(replay, "/ndjson")
        #expect(stream["source"] == "cassette")
        #expect(stream["stream"] == true)
        #expect(stream["interaction"] == 0)
        let chunks = try #require(stream["response"]?["chunks"]?.arrayValue)
        #expect(chunks.map { $0["text"]?.stringValue } == ["{\"n\":0}\n", "{\"n\":1}\n", "{\"n\":2}\n"])
        #expect(chunks.map { $0["size"] } == [8, 8, 8])
        let offsets = chunks.compactMap { $0["offsetMs"]?.numberValue?.doubleValue }
        #expect(offsets.count == 3 && offsets[0] == 0 && offsets[1] >= 50 && offsets[2] > offsets[1], "\(offsets)")

        #expect(try await replay.client.send(.get, "/users?page=2").status == 404)
        let miss = try await Self.detail(replay, "/users?page=2")
        #expect(miss["source"] == "miss")
        #expect(miss["miss"]?["cassette"]?.stringValue == cassette)
        let nearest = try #require(miss["miss"]?["nearest"]?.arrayValue?.first)
        #expect(nearest["interaction"] == 1)
        #expect(nearest["differences"]?.arrayValue?.isEmpty == false)
        #expect(
            nearest["fields"]?.arrayValue?.contains(["part": "query", "name": "page", "here": "2", "recorded": "1"])
                == true, "\(nearest)")

        _ = try await replay.client.send(
            .post, "/search", headers: ["Content-Type": "application/json"],
            body: Array(#"{"user":{"name":"b","age":3}}"#.utf8))
        let bodyMiss = try await Self.detail(replay, "/search")
        let fields = try #require(bodyMiss["miss"]?["nearest"]?.arrayValue?.first?["fields"]?.arrayValue)
        #expect(fields == [["part": "body", "pointer": "/user/name"]], "\(fields)")
        #expect(bodyMiss["canSave"] == false)
    }

    @Test("save to cassette records a live exchange, redacted, and refuses what it cannot save")
    func save() async throws {
        let cassette = try Fixtures.temporaryDirectory() + "/api.json"
        let upstream = try await Self.upstream()
        var configuration = ProxyConfiguration(
            mode: .new, cassettePath: cassette, upstream: UpstreamConfiguration(baseURL: upstream.baseURL))
        configuration.recordFilter = try RecordFilter(passthrough: ["/live/**"])
        let harness = try await ProxyHarness.start(configuration)
        _ = try await harness.client.send(.get, "/kept")
        _ = try await harness.client.send(
            .get, "/live/1?api_key=key-123", headers: ["Authorization": "Bearer live-secret-456"])
        let live = try await Self.detail(harness, "/live/1?api_key=[REDACTED]")
        #expect(live["source"] == "passthrough")
        #expect(live["canSave"] == true)
        let id = try #require(live["id"]?.numberValue?.intValue)

        // A save is a mutation: JSON only, as every admin mutation.
        let form = try await harness.client.send(
            .post, "/__kakapo/requests/\(id)/save", headers: ["Content-Type": "text/plain"], body: Array("{}".utf8))
        #expect(form.status == 403)
        let saved = try await harness.send(.post, "/__kakapo/requests/\(id)/save", json: "{}")
        #expect(saved.status == 201, "\(saved.text)")
        let answer = try JSONParser.parse(saved.body)
        #expect(answer["cassette"]?.stringValue == cassette)
        #expect(answer["interaction"] == 1)
        let again = try await harness.send(.post, "/__kakapo/requests/\(id)/save", json: "{}")
        #expect(again.status == 409)
        #expect(try JSONParser.parse(again.body)["error"]?.stringValue?.contains("already saved") == true)
        #expect(try await Self.detail(harness, "/live/1?api_key=[REDACTED]")["saved"]?["interaction"] == 1)
        let kept = try #require(try await Self.detail(harness, "/kept")["id"]?.numberValue?.intValue)
        let recorded = try await harness.send(.post, "/__kakapo/requests/\(kept)/save", json: "{}")
        #expect(recorded.status == 409)
        #expect(try await harness.send(.post, "/__kakapo/requests/999999/save", json: "{}").status == 404)
        await harness.stop()
        await upstream.stop()

        let text = try String(contentsOfFile: cassette, encoding: .utf8)
        #expect(text.contains("/live/1?api_key=[REDACTED]"), "\(text)")
        #expect(!text.contains("live-secret-456") && !text.contains("key-123"))
        // Replayed next time, with no upstream.
        let replay = try await ProxyHarness.replaying(cassette)
        defer { Task { await replay.stop() } }
        let replayed = try await replay.client.send(.get, "/live/1?api_key=other")
        #expect(replayed.source == "cassette")
        #expect(replayed.text == #"{"path":"/live/1"}"#)
    }

    @Test("in a mode that does not record, the first save starts saving the cassette, and shutdown folds it in")
    func saveWithoutRecording() async throws {
        let cassette = try Fixtures.temporaryDirectory() + "/api.json"
        let upstream = try await Self.upstream()
        let recorder = try await ProxyHarness.recording(upstream, cassette: cassette)
        _ = try await recorder.client.send(.get, "/first")
        await recorder.stop()

        let harness = try await ProxyHarness.start(
            ProxyConfiguration(
                mode: .passthrough, cassettePath: cassette, upstream: UpstreamConfiguration(baseURL: upstream.baseURL)))
        _ = try await harness.client.send(.get, "/second")
        let second = try await Self.detail(harness, "/second")
        #expect(second["source"] == "upstream")
        let id = try #require(second["id"]?.numberValue?.intValue)
        let saved = try await harness.send(.post, "/__kakapo/requests/\(id)/save", json: "{}")
        #expect(saved.status == 201, "\(saved.text)")
        #expect(try JSONParser.parse(saved.body)["interaction"] == 1)
        // In passthrough, a large request body goes upstream as it arrives: not kept, so not saved.
        _ = try await harness.client.send(
            .post, "/upload", headers: ["Content-Type": "text/plain"], body: Fixtures.large(2 << 20))
        let upload = try await Self.detail(harness, "/upload")
        #expect(upload["canSave"] == false)
        #expect(upload["cannotSave"]?.stringValue?.contains("as it arrived") == true, "\(upload)")
        await harness.stop()
        await upstream.stop()

        let replay = try await ProxyHarness.replaying(cassette)
        defer { Task { await replay.stop() } }
        #expect(try await replay.client.send(.get, "/first").source == "cassette")
        #expect(try await replay.client.send(.get, "/second").text == #"{"path":"/second"}"#)
    }

    @Test("the cassette view lists the interactions, which were used and which are stale, and shows one whole")
    func cassetteView() async throws {
        let cassette = try Fixtures.temporaryDirectory() + "/api.json"
        let upstream = try await Self.upstream()
        let recorder = try await ProxyHarness.recording(upstream, cassette: cassette)
        _ = try await recorder.client.send(.get, "/old")
        _ = try await recorder.client.send(.get, "/new")
        await recorder.stop()
        await upstream.stop()
        // The first recording made in 2020.
        var text = try String(contentsOfFile: cassette, encoding: .utf8)
        let recordedAt = try #require(text.firstMatch(of: /"recordedAt"\s*:\s*"[^"]*"/))
        text.replaceSubrange(recordedAt.range, with: #""recordedAt": "2020-01-01T00:00:00.000Z""#)
        try text.write(toFile: cassette, atomically: true, encoding: .utf8)

        let harness = try await ProxyHarness.start(
            ProxyConfiguration(mode: .replay, cassettePath: cassette, maximumAge: 86_400))
        defer { Task { await harness.stop() } }
        _ = try await harness.client.send(.get, "/new")
        let view = try JSONParser.parse(try await harness.client.send(.get, "/__kakapo/cassette").body)
        #expect(view["cassette"]?.stringValue == cassette)
        #expect(view["mode"] == "none")
        #expect(view["maxAge"]?.stringValue != nil)
        let listed = try #require(view["interactions"]?.arrayValue)
        #expect(listed.map { $0["url"]?.stringValue } == ["/old", "/new"])
        #expect(listed.map { $0["used"] } == [false, true])
        #expect(listed.map { $0["stale"] } == [true, false])
        #expect(listed.map { $0["kind"] } == ["http", "http"])
        #expect(listed[1]["status"] == 200 && listed[1]["responseBytes"] == 15)
        #expect(listed[0]["recordedAt"] == "2020-01-01T00:00:00.000Z")

        let one = try JSONParser.parse(try await harness.client.send(.get, "/__kakapo/cassette/1").body)
        #expect(one["interaction"] == 1 && one["used"] == true && one["stale"] == false)
        #expect(one["request"]?["method"] == "GET")
        #expect(one["response"]?["body"]?["text"] == #"{"path":"/new"}"#)
        #expect(try await harness.client.send(.get, "/__kakapo/cassette/2").status == 404)
        #expect(try await harness.client.send(.get, "/__kakapo/cassette?session=nope").status == 404)

        let none = try await ProxyHarness.serving(routes: "{}")
        defer { Task { await none.stop() } }
        let missing = try await none.client.send(.get, "/__kakapo/cassette")
        #expect(missing.status == 404)
        #expect(try JSONParser.parse(missing.body)["error"] == "no cassette is loaded")
    }

    @Test("the detail store keeps to its bounds: the newest details within 32 MiB, large bodies cut or left out")
    func bounds() async throws {
        let harness = try await ProxyHarness.serving(
            routes: #"{"routes": [{"method": "POST", "path": "/upload/:n", "response": {"text": "ok"}}]}"#)
        defer { Task { await harness.stop() } }
        let megabyte = [UInt8](repeating: UInt8(ascii: "a"), count: 1 << 20)
        for n in 0..<40 {
            _ = try await harness.client.send(
                .post, "/upload/\(n)", headers: ["Content-Type": "text/plain"], body: megabyte)
        }
        _ = try await harness.client.send(
            .post, "/upload/text", headers: ["Content-Type": "text/plain"], body: megabyte + megabyte)
        _ = try await harness.client.send(
            .post, "/upload/json", headers: ["Content-Type": "application/json"],
            body: Array("[\"".utf8) + megabyte + megabyte + Array("\"]".utf8))
        let text = try await Self.detail(harness, "/upload/text")
        #expect(text["request"]?["body"]?["size"]?.numberValue?.intValue == 2 << 20)
        #expect(text["request"]?["body"]?["kept"]?.numberValue?.intValue == 1 << 20)
        #expect(text["request"]?["body"]?["truncated"] == true)
        let json = try await Self.detail(harness, "/upload/json")
        #expect(json["request"]?["body"]?["kept"] == 0)
        #expect(json["canSave"] == false)
        #expect(harness.server.pipeline.inspector.detailBytes <= 32 << 20)
        let journal = try JSONParser.parse(try await harness.client.send(.get, "/__kakapo/requests").body)
        let first = try #require(
            journal["requests"]?.arrayValue?.first { $0["url"] == "/upload/0" }?["id"]?.numberValue?.intValue)
        #expect(try await harness.client.send(.get, "/__kakapo/requests/\(first)").status == 404)
        let last = try await Self.detail(harness, "/upload/39")
        #expect(last["request"]?["body"]?["kept"]?.numberValue?.intValue == 1 << 20)
    }

    @Test("in a cassette session, events name the session, the cassette view is the session's, and save writes there")
    func sessions() async throws {
        let directory = try Fixtures.temporaryDirectory()
        let upstream = try await Self.upstream()
        var configuration = ProxyConfiguration(mode: .new, upstream: UpstreamConfiguration(baseURL: upstream.baseURL))
        configuration.sessionDirectory = directory
        configuration.recordFilter = try RecordFilter(passthrough: ["/live/**"])
        let harness = try await ProxyHarness.start(configuration)
        defer { Task { await harness.stop() } }
        let id = try await SessionTests.open(harness.port, #"{"cassette": "mine.json", "mode": "new"}"#)
        _ = try await harness.client.send(.get, "/kept", headers: ["X-Kakapo-Session": id])
        _ = try await harness.client.send(.get, "/live/3", headers: ["X-Kakapo-Session": id])
        let live = try await Self.detail(harness, "/live/3")
        #expect(live["session"]?.stringValue == id)
        #expect(live["source"] == "passthrough")
        // As the app sent it (its value redacted: a session-named header is a credential to the redactor).
        #expect(Self.header("X-Kakapo-Session", in: live["request"]) != nil)
        let number = try #require(live["id"]?.numberValue?.intValue)
        let saved = try await harness.send(.post, "/__kakapo/requests/\(number)/save", json: "{}")
        #expect(saved.status == 201, "\(saved.text)")
        #expect(try JSONParser.parse(saved.body)["cassette"] == "mine.json")

        let readOnly = try await SessionTests.open(harness.port, #"{"cassette": "other.json", "mode": "passthrough"}"#)
        _ = try await harness.client.send(.get, "/live/4", headers: ["X-Kakapo-Session": readOnly])
        let refused = try await Self.detail(harness, "/live/4")
        #expect(refused["canSave"] == false)
        #expect(refused["cannotSave"]?.stringValue?.contains("does not record") == true, "\(refused)")
        // What the session recorded is listed once the file holds it (folded within a second or so).
        var view = JSONValue.null
        for _ in 0..<100 {
            let answer = try await harness.client.send(.get, "/__kakapo/cassette?session=\(id)")
            #expect(answer.status == 200)
            view = try JSONParser.parse(answer.body)
            if view["interactions"]?.arrayValue?.count == 2 { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(view["cassette"] == "mine.json")
        #expect(view["interactions"]?.arrayValue?.map { $0["url"] } == ["/kept", "/live/3"], "\(view)")
        #expect(view["interactions"]?.arrayValue?.map { $0["used"] } == [false, false])

        let closed = try await SessionTests.admin(harness.port, "DELETE", "/__kakapo/sessions/\(id)")
        #expect(closed.status == 200)
        let text = try String(contentsOfFile: directory + "/mine.json", encoding: .utf8)
        #expect(text.contains("/kept") && text.contains("/live/3"), "\(text)")
        await upstream.stop()
    }
}
