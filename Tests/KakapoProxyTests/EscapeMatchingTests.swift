import Foundation
import Kakapo
import KakapoTestSupport
import Testing

/// Percent-escapes compared as RFC 3986 section 6.2.2 says, through real sockets: recorded from a local
/// upstream, replayed to curl (which sends the target as written with `--path-as-is`) and to a raw TCP
/// client (which sends bytes no HTTP client would).
@Suite("Escape matching")
struct EscapeMatchingTests {
    /// Answers every request with its target as the upstream received it.
    static func echoTarget(_ request: HTTP.Request) -> TestUpstream.Reply {
        .response(HTTP.Response(status: 200, contentType: "text/plain", text: "target " + request.target))
    }

    /// Fetches `target` from Kakapo on `port` with curl, sending the target as written.
    static func curl(port: Int, _ target: String) async throws -> (status: Int, source: String?, body: String) {
        let result = try await KakapoProcess.run(
            [
                "--silent", "--show-error", "--max-time", "10", "--path-as-is", "--include",
                "http://127.0.0.1:\(port)" + target,
            ],
            executable: "/usr/bin/curl")
        return Self.parse(result.output)
    }

    /// Status, `X-Kakapo-Source` and body of a raw HTTP/1.1 answer.
    static func parse(_ text: String) -> (status: Int, source: String?, body: String) {
        let parts = text.components(separatedBy: "\r\n\r\n")
        let head = parts.first ?? ""
        let lines = head.components(separatedBy: "\r\n")
        let status = lines.first.flatMap { Int($0.split(separator: " ").dropFirst().first ?? "") } ?? 0
        let source = lines.first { $0.lowercased().hasPrefix("x-kakapo-source:") }
            .map { $0.dropFirst("x-kakapo-source:".count).trimmingCharacters(in: .whitespaces) }
        return (status, source, parts.dropFirst().joined(separator: "\r\n\r\n"))
    }

    /// Sends `target` as raw bytes on a new connection and returns the parsed answer.
    static func raw(port: Int, _ target: [UInt8]) throws -> (status: Int, source: String?, body: String) {
        let connection = try RawConnection(port: port)
        connection.send(
            bytes: Array("GET ".utf8) + target + Array(" HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".utf8))
        return parse(connection.receive().text)
    }

    @Test("a recording of /caf%C3%A9 and %7E answers lower-case escapes, ~ and raw UTF-8; %2F stays apart from /")
    func escapesMatchAsRFC3986Says() async throws {
        let directory = try Fixtures.temporaryDirectory()
        let cassette = directory + "/escapes.json"
        let upstream = try await TestUpstream.start(Self.echoTarget)
        let recorder = try await ProxyHarness.recording(upstream, cassette: cassette)
        let recorded = try await recorder.client.send(.get, "/caf%C3%A9/a%7Eb/%41?q=%C3%A9")
        #expect(recorded.status == 200 && recorded.source == "upstream")
        _ = try await recorder.client.send(.get, "/dir/file")
        await recorder.stop()
        await upstream.stop()
        // The cassette keeps the bytes as sent.
        let saved = try String(contentsOfFile: cassette, encoding: .utf8)
        #expect(saved.contains("/caf%C3%A9/a%7Eb/%41?q=%C3%A9"), "\(saved)")

        let replay = try await ProxyHarness.replaying(cassette)
        for target in [
            "/caf%c3%a9/a~b/A?q=%c3%a9", "/caf%C3%A9/a%7eb/%41?q=%C3%A9", "/caf%c3%A9/a%7Eb/A?q=é",
        ] {
            let answer = try await Self.curl(port: replay.port, target)
            #expect(answer.status == 200 && answer.source == "cassette", "\(target): \(answer)")
            #expect(answer.body == "target /caf%C3%A9/a%7Eb/%41?q=%C3%A9", "\(target)")
        }
        // Raw UTF-8 bytes are the same bytes escaped.
        let rawAnswer = try Self.raw(port: replay.port, Array("/café/a~b/A?q=é".utf8))
        #expect(rawAnswer.status == 200 && rawAnswer.source == "cassette", "\(rawAnswer)")
        // A reserved escape is not the character: %2F names one segment, / two.
        let slash = try await Self.curl(port: replay.port, "/dir%2Ffile")
        #expect(slash.status == 404 && slash.source == "miss", "\(slash)")
        let plain = try await Self.curl(port: replay.port, "/dir/file")
        #expect(plain.status == 200 && plain.source == "cassette", "\(plain)")
        await replay.stop()
    }

    @Test("raw UTF-8 in the query is accepted as in the path, forwarded and recorded with upper-case escapes")
    func rawUTF8IsRecordedEscaped() async throws {
        let directory = try Fixtures.temporaryDirectory()
        let cassette = directory + "/raw.json"
        let upstream = try await TestUpstream.start(Self.echoTarget)
        let recorder = try await ProxyHarness.recording(upstream, cassette: cassette)
        // What curl sends for http://host/café?q=é: the path escaped in lower case, the query raw.
        let curlStyle = try Self.raw(port: recorder.port, Array("/caf%c3%a9?q=é".utf8))
        #expect(curlStyle.status == 200 && curlStyle.source == "upstream", "\(curlStyle)")
        let allRaw = try Self.raw(port: recorder.port, Array("/thé?q=ü&r=1".utf8))
        #expect(allRaw.status == 200 && allRaw.source == "upstream", "\(allRaw)")
        // A keep-alive connection: a body, then a second request with raw bytes, each read as sent.
        let connection = try RawConnection(port: recorder.port)
        connection.send(
            bytes: Array("POST /ünï HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n\r\néé".utf8)
                + Array("GET /ö?ä=1 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".utf8))
        let both = connection.receive().text
        #expect(both.components(separatedBy: "HTTP/1.1 200 OK").count == 3, "\(both)")
        await recorder.stop()
        await upstream.stop()
        let received = upstream.received.map(\.target)
        #expect(
            received == ["/caf%c3%a9?q=%C3%A9", "/th%C3%A9?q=%C3%BC&r=1", "/%C3%BCn%C3%AF", "/%C3%B6?%C3%A4=1"],
            "\(received)")
        #expect(upstream.received.count == 4 && upstream.received[2].body == Array("éé".utf8))
        let saved = try String(contentsOfFile: cassette, encoding: .utf8)
        #expect(saved.contains("/th%C3%A9?q=%C3%BC&r=1") && saved.contains("/caf%c3%a9?q=%C3%A9"), "\(saved)")

        // And they replay to the same bytes raw, or escaped in either case.
        let replay = try await ProxyHarness.replaying(cassette)
        let again = try Self.raw(port: replay.port, Array("/caf%C3%A9?q=é".utf8))
        #expect(again.status == 200 && again.source == "cassette", "\(again)")
        let escaped = try await Self.curl(port: replay.port, "/th%c3%a9?q=%c3%bc&r=1")
        #expect(escaped.status == 200 && escaped.source == "cassette", "\(escaped)")
        await replay.stop()
    }

    @Test("bodies pass untouched: a chunked body with UTF-8, then a body that looks like a request line")
    func bodiesAreNeverEscaped() async throws {
        let directory = try Fixtures.temporaryDirectory()
        let upstream = try await TestUpstream.start(Self.echoTarget)
        let recorder = try await ProxyHarness.recording(upstream, cassette: directory + "/bodies.json")
        let connection = try RawConnection(port: recorder.port)
        connection.send(
            bytes: Array("POST /chunked?q=ü HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n".utf8)
                + Array("4\r\néé\r\n0\r\n\r\n".utf8)
                + Array("POST /plain HTTP/1.1\r\nHost: x\r\nContent-Length: 6\r\nConnection: close\r\n\r\nGET é".utf8))
        let both = connection.receive().text
        #expect(both.components(separatedBy: "HTTP/1.1 200 OK").count == 3, "\(both)")
        await recorder.stop()
        await upstream.stop()
        #expect(upstream.received.map(\.target) == ["/chunked?q=%C3%BC", "/plain"])
        #expect(upstream.received.map(\.body) == [Array("éé".utf8), Array("GET é".utf8)])
    }

    @Test(
        "a request with raw UTF-8 handed to the pipeline in process goes upstream and to the cassette escaped in upper case"
    )
    func inProcessRawBytesAreEscapedUpstream() async throws {
        let directory = try Fixtures.temporaryDirectory()
        let cassette = directory + "/in-process.json"
        let upstream = try await TestUpstream.start(Self.echoTarget)
        let recorder = try await ProxyHarness.recording(upstream, cassette: cassette)
        let answer = await recorder.server.pipeline.answer(HTTP.Request(method: .get, target: "/café?q=é x&k=%c3%a9"))
        #expect(answer.status == 200 && answer.source == .upstream, "\(answer.response?.text ?? "")")
        await recorder.stop()
        await upstream.stop()
        #expect(upstream.received.map(\.target) == ["/caf%C3%A9?q=%C3%A9%20x&k=%c3%a9"])
        let saved = try String(contentsOfFile: cassette, encoding: .utf8)
        #expect(saved.contains("/caf%C3%A9?q=%C3%A9%20x&k=%c3%a9"), "\(saved)")
    }
}
