import Foundation
import Kakapo
import KakapoTestSupport
import Testing

/// Issue 42: a response that repeats a secret of its request is written with a placeholder that names
/// where the request carried it, and replay writes the live request's value there; MCP progress tokens
/// are matched as any token and given back in progress notifications.
@Suite("Echoes given back on replay")
struct EchoReplayTests {
    /// An upstream that reflects the CSRF token in JSON, in a header and in HTML, and the query's
    /// `access_token` inside a header and in a `Location`; gzip when the client accepts it.
    static func reflectingUpstream() async throws -> TestUpstream {
        try await TestUpstream.start { request in
            let token = request.headers["X-CSRF-Token"] ?? ""
            let access =
                request.queryItems.first { $0.name == "access_token" }?.value?.removingPercentEncoding ?? ""
            var headers = HTTP.Headers()
            headers.add(name: "X-CSRF-Echo", value: token)
            headers.add(name: "X-Next", value: "/next?page=2&from=\(access)")
            headers.add(name: "Location", value: "/next?access_token=\(access)")
            let body: [UInt8]
            if request.path == "/page" {
                headers.add(name: "Content-Type", value: "text/html")
                body = Array("<form><input name=\"csrf\" value=\"\(token)\"></form>".utf8)
            } else {
                headers.add(name: "Content-Type", value: "application/json")
                body = JSONWriter().write(["csrf": .string(token), "note": .string("checked \(token) ok")])
            }
            if request.headers["Accept-Encoding"]?.contains("gzip") == true {
                headers.add(name: "Content-Encoding", value: "gzip")
                return .response(HTTP.Response(status: 200, headers: headers, body: ContentCoding.gzip.encode(body)))
            }
            return .response(HTTP.Response(status: 200, headers: headers, body: body))
        }
    }

    static func headers(_ token: String, gzip: Bool = false) -> HTTP.Headers {
        var headers = HTTP.Headers([("X-CSRF-Token", token)])
        if gzip { headers.add(name: "Accept-Encoding", value: "gzip") }
        return headers
    }

    @Test("a reflected CSRF token and access token are written as named placeholders and replayed with the live values")
    func givesEchoesBack() async throws {
        let cassette = try Fixtures.temporaryDirectory() + "/echoes.json"
        let upstream = try await Self.reflectingUpstream()
        let recorder = try await ProxyHarness.recording(upstream, cassette: cassette)
        let recordedToken = "csrf-recorded-123456"
        let recordedAccess = "at-recorded-abcdef"
        for (path, gzip) in [("/api", false), ("/page", false), ("/zipped", true)] {
            let answer = try await recorder.client.send(
                .get, "\(path)?access_token=\(recordedAccess)", headers: Self.headers(recordedToken, gzip: gzip))
            #expect(answer.status == 200)
        }
        await recorder.stop()
        await upstream.stop()
        let text = try String(contentsOfFile: cassette, encoding: .utf8)
        #expect(!text.contains(recordedToken) && !text.contains(recordedAccess), "\(text)")
        #expect(text.contains("[REDACTED](request header x-csrf-token)"), "\(text)")
        #expect(text.contains("/next?page=2&from=[REDACTED](request query access_token)"), "\(text)")
        // A credential-named parameter in a URL is redacted by its shape first: plain, never given back.
        #expect(text.contains(#"["Location", "/next?access_token=[REDACTED]"]"#), "\(text)")
        #expect(text.contains(#""echoes": ["#), "the interaction lists the sources it gives back")

        let player = try await ProxyHarness.replaying(cassette)
        // A live value that JSON, HTML and a header each have to write in their own way.
        let live = "live\"<tok>&'9876543"
        let access = "at-live-654321"
        let json = try await player.client.send(.get, "/api?access_token=\(access)", headers: Self.headers(live))
        #expect(json.status == 200)
        #expect(json.source == "cassette")
        let object = try JSONParser.parse(json.body)
        #expect(object["csrf"] == .string(live), "\(json.text)")
        #expect(object["note"] == .string("checked \(live) ok"))
        #expect(json.headers["X-CSRF-Echo"] == live)
        #expect(json.headers["X-Next"] == "/next?page=2&from=\(access)")
        #expect(json.headers["Location"] == "/next?access_token=[REDACTED]")
        #expect(json.headers["Content-Length"] == String(json.body.count))

        let page = try await player.client.send(.get, "/page?access_token=\(access)", headers: Self.headers(live))
        #expect(page.text == "<form><input name=\"csrf\" value=\"live&quot;&lt;tok&gt;&amp;&apos;9876543\"></form>")

        let zipped = try await player.client.send(
            .get, "/zipped?access_token=\(access)", headers: Self.headers("zip-live-000111", gzip: true))
        #expect(zipped.headers["Content-Encoding"] == "gzip")
        let content = try #require(ContentCoding.gzip.decode(zipped.body))
        #expect(try JSONParser.parse(content)["csrf"] == .string("zip-live-000111"))
        #expect(zipped.headers["Content-Length"] == String(zipped.body.count))

        // A live request without the source keeps the placeholder: nothing is made up.
        let bare = try await player.client.send(.get, "/api?access_token=\(access)")
        #expect(bare.status == 200)
        #expect(bare.text.contains("[REDACTED](request header x-csrf-token)"), "\(bare.text)")
        await player.stop()
    }

    @Test("two URLs that differ only in a redacted value (an OAuth code) stay two recordings, replayed in order")
    func redactedIdentity() async throws {
        let cassette = try Fixtures.temporaryDirectory() + "/codes.json"
        let upstream = try await TestUpstream.start { request in
            let code = String(request.target.suffix(6))
            return .response(
                HTTP.Response(
                    status: 200, contentType: "text/plain",
                    text: "\(code == "111111" ? "first" : "second") closed \(code)"))
        }
        let recorder = try await ProxyHarness.recording(upstream, cassette: cassette)
        for code in ["111111", "222222"] {
            #expect(try await recorder.client.send(.get, "/close?code=\(code)").text.hasSuffix("closed \(code)"))
        }
        await recorder.stop()
        await upstream.stop()
        let cassetteFile = try CassetteFile.load(cassette)
        #expect(
            cassetteFile.interactions.map(\.request.target) == ["/close?code=[REDACTED]", "/close?code=[REDACTED]"])
        let text = try String(contentsOfFile: cassette, encoding: .utf8)
        #expect(!text.contains("111111") && !text.contains("222222"))
        // The answers are the two recorded, in order, whatever the live codes are, each echoing its own.
        let player = try await ProxyHarness.replaying(cassette)
        #expect(try await player.client.send(.get, "/close?code=999991").text == "first closed 999991")
        #expect(try await player.client.send(.get, "/close?code=999992").text == "second closed 999992")
        await player.stop()
    }

    @Test("--redact NAME redacts a correlation id the rules keep, in a header, the query and JSON at any depth")
    func redactNamed() async throws {
        let cassette = try Fixtures.temporaryDirectory() + "/named.json"
        let upstream = try await TestUpstream.start { request in
            .response(
                HTTP.Response(status: 200, contentType: "application/json", text: #"{"ok":{"state":"st-kept-12345"}}"#))
        }
        let redactor = Redactor().adding(headers: [], queryParameters: [], names: ["state"], keeping: [])
        let recorder = try await ProxyHarness.recording(upstream, cassette: cassette, redactor: redactor)
        _ = try await recorder.client.send(
            .post, "/cb?state=st-query-12345",
            headers: HTTP.Headers([("State", "st-header-12345"), ("Content-Type", "application/json")]),
            body: Array(#"{"outer":{"state":"st-body-12345"}}"#.utf8))
        await recorder.stop()
        await upstream.stop()
        let text = try String(contentsOfFile: cassette, encoding: .utf8)
        for value in ["st-query-12345", "st-header-12345", "st-body-12345", "st-kept-12345"] {
            #expect(!text.contains(value), "\(value) was written")
        }
    }
}

/// MCP over streamable HTTP: a client that chooses its own progress tokens replays a recording made with
/// other ones, and each progress notification carries the live token.
@Suite("MCP progress tokens across a replay")
struct MCPProgressReplayTests {
    static func call(_ id: Int, token: String) -> [UInt8] {
        Array(
            #"{"jsonrpc":"2.0","id":\#(id),"method":"tools/call","params":{"name":"slow","arguments":{},"_meta":{"progressToken":"\#(token)"}}}"#
                .utf8)
    }

    @Test(
        "progress notifications in the recorded stream carry the live request's progress token and the response its id")
    func progressTokenGivenBack() async throws {
        let cassette = try Fixtures.temporaryDirectory() + "/mcp.json"
        let upstream = try await TestUpstream.start { request in
            let json = (try? JSONParser.parse(request.body)) ?? .null
            let id = json["id"] ?? .null
            let token = json["params"]?["_meta"]?["progressToken"] ?? .null
            let progress = JSONWriter().write([
                "jsonrpc": "2.0", "method": "notifications/progress",
                "params": ["progressToken": token, "progress": 1, "total": 2],
            ])
            let result = JSONWriter().write(["jsonrpc": "2.0", "id": id, "result": ["content": []]])
            let stream =
                "event: message\ndata: " + String(decoding: progress, as: UTF8.self) + "\n\n"
                + "event: message\ndata: " + String(decoding: result, as: UTF8.self) + "\n\n"
            return .response(HTTP.Response(status: 200, contentType: "text/event-stream", text: stream))
        }
        let recorder = try await ProxyHarness.recording(upstream, cassette: cassette)
        _ = try await recorder.client.send(
            .post, "/mcp", headers: HTTP.Headers([("Content-Type", "application/json")]),
            body: Self.call(1, token: "recorded-token-1"))
        await recorder.stop()
        await upstream.stop()
        #expect(try String(contentsOfFile: cassette, encoding: .utf8).contains("recorded-token-1"))

        let player = try await ProxyHarness.replaying(cassette)
        let answer = try await player.client.send(
            .post, "/mcp", headers: HTTP.Headers([("Content-Type", "application/json")]),
            body: Self.call(7, token: "live-token-9"))
        #expect(answer.status == 200)
        #expect(answer.source == "cassette")
        #expect(answer.text.contains(#""progressToken":"live-token-9""#), "\(answer.text)")
        #expect(answer.text.contains(#""id":7"#), "\(answer.text)")
        #expect(!answer.text.contains("recorded-token-1"))
        await player.stop()
    }
}
