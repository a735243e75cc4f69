import Foundation
import Kakapo
import KakapoTestSupport
import Testing

/// Secrets, matching options and readable storage, end to end through the real server.
@Suite("Cassettes people can trust")
struct CassetteTrustTests {
    /// An upstream that echoes the request's headers and body back in its JSON body and in headers.
    static func echoUpstream() async throws -> TestUpstream {
        try await TestUpstream.start { request in
            var headers: JSONObject = [:]
            for field in request.headers { headers.append(key: field.name, value: .string(field.value)) }
            let body: JSONValue = [
                "url": .string(request.target), "headers": .object(headers),
                "body": .string(String(decoding: request.body, as: UTF8.self)),
            ]
            var reply = HTTP.Headers()
            reply.add(name: "Content-Type", value: "application/json")
            reply.add(name: "X-Echo-Authorization", value: request.headers["Authorization"] ?? "")
            reply.add(name: "Set-Cookie", value: "session=s3ss10n-value; Path=/; HttpOnly")
            return .response(
                HTTP.Response(status: 200, headers: reply, body: JSONWriter(layout: .readable).write(body)))
        }
    }

    @Test("no credential reaches the file, even echoed back by the API; replay with another token still hits")
    func secretsNeverWritten() async throws {
        let cassette = try Fixtures.temporaryDirectory() + "/secrets.json"
        let upstream = try await Self.echoUpstream()
        let proxy = try await ProxyHarness.start(
            ProxyConfiguration(
                mode: .new, cassettePath: cassette, upstream: UpstreamConfiguration(baseURL: upstream.baseURL),
                redactor: Redactor(jsonPointers: [JSONPointer("/password")!])))
        let answer = try await proxy.client.send(
            .post, "/login?api_key=k3y-abcdef&page=1",
            headers: HTTP.Headers([
                ("Authorization", "Bearer t0ken-123456"), ("Cookie", "sid=c00kie-999; theme=dark"),
                ("Content-Type", "application/json"),
            ]),
            body: Array(#"{"user":"ada","password":"hunter2-pass"}"#.utf8))
        #expect(answer.text.contains("t0ken-123456"), "the client gets the real answer")
        let summary = await proxy.stop()
        await upstream.stop()

        let text = try String(contentsOfFile: cassette, encoding: .utf8)
        for secret in ["t0ken-123456", "k3y-abcdef", "c00kie-999", "hunter2-pass", "s3ss10n-value", "dark"] {
            #expect(!text.contains(secret), "\(secret) leaked into the cassette")
        }
        #expect(text.contains(#"["Cookie", "sid=[REDACTED]; theme=[REDACTED]"]"#))
        #expect(text.contains(#"["Set-Cookie", "session=[REDACTED]; Path=/; HttpOnly"]"#))
        #expect(text.contains(#""url": "/login?api_key=[REDACTED]&page=1""#))
        #expect(text.contains(#""password": "[REDACTED]""#))
        // The request's header; its echo in the response's JSON and header names where it came from, so
        // replay can give the live value back (EchoReplayTests).
        #expect(summary.redacted["Authorization"] == 1)
        #expect(text.contains(#""Authorization": "[REDACTED](request header authorization)""#), "\(text)")
        #expect(text.contains(#"["X-Echo-Authorization", "[REDACTED](request header authorization)"]"#))
        #expect(summary.redacted["/password"] == 1)
        // The echoes are found by their names and shapes first (the form of the body, the URL's api_key).
        #expect(summary.redacted.values.reduce(0, +) >= 8, "\(summary.redacted)")
        #expect(summary.text.contains("redacted: "))

        let player = try await ProxyHarness.replaying(cassette)
        let replayed = try await player.client.send(
            .post, "/login?api_key=another-key&page=1",
            headers: HTTP.Headers([("Authorization", "Bearer other"), ("Content-Type", "application/json")]),
            body: Array(#"{"password":"different","user":"ada"}"#.utf8))
        #expect(replayed.status == 200 && replayed.source == "cassette")
        // The echo carries the live request's value, not the recorded one nor the placeholder.
        #expect(replayed.headers["X-Echo-Authorization"] == "Bearer other")
        await player.stop()
    }

    @Test("matching options: ignored query parameters and body fields, matched headers, bodies off")
    func matchingOptions() async throws {
        let cassette = try Fixtures.temporaryDirectory() + "/match.json"
        let upstream = try await Self.echoUpstream()
        let recorder = try await ProxyHarness.recording(upstream, cassette: cassette)
        _ = try await recorder.client.send(.get, "/items?page=1&_=111", headers: ["Accept-Language": "en"])
        _ = try await recorder.client.send(
            .post, "/events", headers: ["Content-Type": "application/json"],
            body: Array(#"{"name":"a","at":"2026-01-01"}"#.utf8))
        await recorder.stop()
        await upstream.stop()

        let options = MatchOptions(
            ignoredQueryParameters: ["_"], ignoredBodyFields: [JSONPointer("/at")!], matchedHeaders: ["Accept-Language"]
        )
        let player = try await ProxyHarness.start(
            ProxyConfiguration(mode: .replay, cassettePath: cassette, matching: options))
        #expect(
            try await player.client.send(.get, "/items?_=999&page=1", headers: ["Accept-Language": "en"]).status == 200)
        let wrongLanguage = try await player.client.send(.get, "/items?page=1", headers: ["Accept-Language": "fr"])
        #expect(wrongLanguage.status == 404)
        #expect(wrongLanguage.text.contains(#"header accept-language: \"fr\" here, \"en\" recorded"#))
        let event = try await player.client.send(
            .post, "/events", headers: ["Content-Type": "application/json"],
            body: Array(#"{"at":"2030-12-31","name":"a"}"#.utf8))
        #expect(event.status == 200)
        await player.stop()

        let bodiesOff = try await ProxyHarness.start(
            ProxyConfiguration(mode: .replay, cassettePath: cassette, matching: MatchOptions(matchBody: false)))
        #expect(try await bodiesOff.client.send(.post, "/events", body: Array("anything".utf8)).status == 200)
        await bodiesOff.stop()
    }

    @Test("a multipart upload recorded with one boundary replays with another; form bodies match field by field")
    func multipartAndForms() async throws {
        let cassette = try Fixtures.temporaryDirectory() + "/upload.json"
        let upstream = try await Self.echoUpstream()
        func multipart(_ boundary: String, file: String) -> (HTTP.Headers, [UInt8]) {
            let body =
                "--\(boundary)\r\nContent-Disposition: form-data; name=\"title\"\r\n\r\nHoliday\r\n"
                + "--\(boundary)\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.txt\"\r\n"
                + "Content-Type: text/plain\r\n\r\n\(file)\r\n--\(boundary)--\r\n"
            return (["Content-Type": "multipart/form-data; boundary=\(boundary)"], Array(body.utf8))
        }
        let recorder = try await ProxyHarness.recording(upstream, cassette: cassette)
        let (headers, body) = multipart("AaB03x", file: "hello")
        _ = try await recorder.client.send(.post, "/upload", headers: headers, body: body)
        _ = try await recorder.client.send(
            .post, "/form", headers: ["Content-Type": "application/x-www-form-urlencoded"],
            body: Array("a=1&b=two+words".utf8))
        await recorder.stop()
        await upstream.stop()

        let player = try await ProxyHarness.replaying(cassette)
        let (otherHeaders, otherBody) = multipart("----WebKitFormBoundary7MA4YWxk", file: "hello")
        #expect(try await player.client.send(.post, "/upload", headers: otherHeaders, body: otherBody).status == 200)
        let (changedHeaders, changedBody) = multipart("zzz", file: "changed")
        let miss = try await player.client.send(.post, "/upload", headers: changedHeaders, body: changedBody)
        #expect(miss.status == 404)
        #expect(miss.text.contains("multipart part 2 (file) differs"))
        let form = try await player.client.send(
            .post, "/form", headers: ["Content-Type": "application/x-www-form-urlencoded"],
            body: Array("b=two%20words&a=1".utf8))
        #expect(form.status == 200)
        await player.stop()
    }

    @Test("recording the same traffic twice differs only in timestamps and durations")
    func stableRecordings() async throws {
        let directory = try Fixtures.temporaryDirectory()
        let upstream = try await TestUpstream.start { request in
            .response(
                HTTP.Response(
                    status: 200, contentType: "application/json", text: #"{"path":"\#(request.path)","n":[1,2]}"#))
        }
        for name in ["first.json", "second.json"] {
            let recorder = try await ProxyHarness.recording(upstream, cassette: directory + "/" + name)
            for path in ["/a", "/b?x=1", "/c"] { _ = try await recorder.client.send(.get, path) }
            _ = try await recorder.client.send(.post, "/d", body: Array(#"{"k":"v"}"#.utf8))
            await recorder.stop()
        }
        await upstream.stop()
        let first = try String(contentsOfFile: directory + "/first.json", encoding: .utf8).split(separator: "\n")
        let second = try String(contentsOfFile: directory + "/second.json", encoding: .utf8).split(separator: "\n")
        #expect(first.count == second.count)
        let differing = zip(first, second).filter { $0 != $1 }.map { $0.0.trimmingCharacters(in: .whitespaces) }
        #expect(!differing.isEmpty)
        #expect(
            differing.allSatisfy { $0.hasPrefix("\"recordedAt\"") || $0.hasPrefix("\"durationMs\"") }, "\(differing)")
    }

    @Test("a hand-edited cassette replays the edit with a correct Content-Length")
    func handEdited() async throws {
        let cassette = try Fixtures.temporaryDirectory() + "/edit.json"
        let upstream = try await TestUpstream.start { _ in
            .response(HTTP.Response(status: 200, contentType: "application/json", text: "{\n  \"title\": \"Old\"\n}\n"))
        }
        let recorder = try await ProxyHarness.recording(upstream, cassette: cassette)
        _ = try await recorder.client.send(.get, "/post")
        await recorder.stop()
        await upstream.stop()
        let text = try String(contentsOfFile: cassette, encoding: .utf8)
        #expect(text.contains(#""title": "Old""#))
        try text.replacingOccurrences(of: #""title": "Old""#, with: #""title": "A much longer new title""#)
            .write(toFile: cassette, atomically: true, encoding: .utf8)

        let player = try await ProxyHarness.replaying(cassette)
        let edited = try await player.client.send(.get, "/post")
        #expect(edited.text == "{\n  \"title\": \"A much longer new title\"\n}\n")
        #expect(edited.headers["Content-Length"] == String(edited.body.count))
        await player.stop()
    }
}
