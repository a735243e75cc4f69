import Foundation
import Kakapo
import KakapoTestSupport
import NIOCore
import Testing

@testable import KakapoProxy

/// Hostile bytes against RawTargetEscaper, the handler in front of NIO's HTTP parser on every connection:
/// its output must not depend on how the bytes are split into reads, it may only turn bytes past 0x7F of
/// request lines into `%XX`, and it must never touch a body (which would let a body's bytes be read as a
/// request, or change what is recorded). The end-to-end tests send the same bytes through a recording
/// server, one TCP segment per byte, and check what the upstream received.
@Suite("RawTargetEscaper probe")
struct RawTargetEscaperProbeTests {
    /// The escaper's output for `input` handed over in reads that end at `cuts`.
    static func escape(_ input: [UInt8], cuts: [Int] = []) -> [UInt8] {
        let escaper = RawTargetEscaper()
        let allocator = ByteBufferAllocator()
        var output: [UInt8] = []
        var start = 0
        for end in (cuts.filter { $0 > 0 && $0 < input.count }.sorted() + [input.count]) where end > start {
            let piece = allocator.buffer(bytes: input[start..<end])
            let out = escaper.escaping(piece, allocator: allocator) ?? piece
            output += out.readableBytesView
            start = end
        }
        return output
    }

    static func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    /// Whether `output` is `input` with some bytes past 0x7F written as `%XX` (upper-case hex), and nothing
    /// else changed; returns how many were escaped, or nil.
    static func escapes(from input: [UInt8], to output: [UInt8]) -> Int? {
        var index = 0
        var count = 0
        for byte in input {
            guard index < output.count else { return nil }
            if output[index] == byte {
                index += 1
            } else if byte >= 0x80, index + 2 < output.count,
                String(decoding: output[index..<index + 3], as: UTF8.self) == String(format: "%%%02X", byte)
            {
                index += 3
                count += 1
            } else {
                return nil
            }
        }
        return index == output.count ? count : nil
    }

    /// Hand-made streams: what each must come out as (nil: unchanged).
    static let cases: [(name: String, input: [UInt8], expected: [UInt8]?)] = [
        (
            "a body that looks like a request line with UTF-8 is not escaped; the next request is",
            bytes("POST /a HTTP/1.1\r\nContent-Length: 19\r\n\r\nGET /é HTTP/1.1\r\n\r\nGET /ü HTTP/1.1\r\n\r\n"),
            bytes("POST /a HTTP/1.1\r\nContent-Length: 19\r\n\r\nGET /é HTTP/1.1\r\n\r\nGET /%C3%BC HTTP/1.1\r\n\r\n")
        ),
        (
            "Transfer-Encoding: nothing after the head is touched",
            bytes("POST /a HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n2\r\né\r\n0\r\n\r\nGET /é HTTP/1.1\r\n\r\n"),
            nil
        ),
        (
            "Transfer-Encoding and Content-Length together: nothing after the head is touched",
            bytes(
                "POST /a HTTP/1.1\r\nContent-Length: 2\r\ntransfer-encoding: chunked\r\n\r\néGET /é HTTP/1.1\r\n\r\n"),
            nil
        ),
        (
            "two different Content-Lengths: nothing after the head is touched",
            bytes("POST /a HTTP/1.1\r\nContent-Length: 2\r\nContent-Length: 4\r\n\r\néGET /é HTTP/1.1\r\n\r\n"), nil
        ),
        (
            "a negative Content-Length: nothing after the head is touched",
            bytes("POST /a HTTP/1.1\r\nContent-Length: -2\r\n\r\néGET /é HTTP/1.1\r\n\r\n"), nil
        ),
        (
            "a Content-Length with a sign, a list or 20 digits: nothing after the head is touched",
            bytes(
                "POST /a HTTP/1.1\r\nContent-Length: +2\r\n\r\néGET /é HTTP/1.1\r\n\r\n"
                    + "POST /a HTTP/1.1\r\nContent-Length: 2, 2\r\n\r\néGET /é HTTP/1.1\r\n\r\n"), nil
        ),
        (
            "20 digits of Content-Length: nothing after the head is touched",
            bytes("POST /a HTTP/1.1\r\nContent-Length: 99999999999999999999\r\n\r\nGET /é HTTP/1.1\r\n\r\n"), nil
        ),
        (
            "18 digits of Content-Length: a body to the end, no overflow",
            bytes("POST /a HTTP/1.1\r\nContent-Length: 999999999999999999\r\n\r\nGET /é HTTP/1.1\r\n\r\n"), nil
        ),
        (
            "a Content-Length line past the limit (padded with spaces): nothing after the head is touched",
            bytes(
                "POST /a HTTP/1.1\r\nContent-Length: 2" + String(repeating: " ", count: 300)
                    + "\r\n\r\néGET /é X\r\n\r\n"),
            nil
        ),
        (
            "a 10,000-byte header line of another field does not stop the following",
            bytes(
                "GET /a HTTP/1.1\r\nX-Long: \(String(repeating: "é", count: 5000))\r\nContent-Length: 2\r\n\r\néGET /é X\r\n\r\n"
            ),
            bytes(
                "GET /a HTTP/1.1\r\nX-Long: \(String(repeating: "é", count: 5000))\r\nContent-Length: 2\r\n\r\néGET /%C3%A9 X\r\n\r\n"
            )
        ),
        (
            "CONNECT: the tunnel's bytes are not HTTP",
            bytes("CONNECT a:443 HTTP/1.1\r\nHost: a:443\r\n\r\nGET /é HTTP/1.1\r\n\r\n"), nil
        ),
        (
            "Upgrade: the new protocol's bytes are not HTTP",
            bytes("GET /ws HTTP/1.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\nGET /é HTTP/1.1\r\n\r\n"), nil
        ),
        (
            "a header name holding a CR is no Content-Length: only letters compare in any case",
            bytes("POST /a HTTP/1.1\r\nContent\rLength: 2\r\n\r\né"),
            bytes("POST /a HTTP/1.1\r\nContent\rLength: 2\r\n\r\n%C3%A9")
        ),
        (
            "CONTENT-LENGTH in capitals and a tab before the value are followed",
            bytes("POST /a HTTP/1.1\r\nCONTENT-LENGTH:\t2 \r\n\r\néGET /é X\r\n\r\n"),
            bytes("POST /a HTTP/1.1\r\nCONTENT-LENGTH:\t2 \r\n\r\néGET /%C3%A9 X\r\n\r\n")
        ),
        (
            "bare LF line ends and blank lines before a request",
            bytes("\r\n\nGET /é HTTP/1.1\nContent-Length: 2\n\néGET /ü X\n\n"),
            bytes("\r\n\nGET /%C3%A9 HTTP/1.1\nContent-Length: 2\n\néGET /%C3%BC X\n\n")
        ),
        (
            "UTF-8 in header values and names is never escaped",
            bytes("GET /a HTTP/1.1\r\nX-Name: Zoë\r\nÜber: 1\r\n\r\n"), nil
        ),
        (
            "every byte from 0x80 to 0xFF in a target",
            [UInt8]("GET /".utf8) + (0x80...0xFF).map { UInt8($0) } + [UInt8](" HTTP/1.1\r\n\r\n".utf8),
            [UInt8]("GET /".utf8) + (0x80...0xFF).flatMap { Array(String(format: "%%%02X", $0).utf8) }
                + [UInt8](" HTTP/1.1\r\n\r\n".utf8)
        ),
    ]

    @Test("hand-made hostile streams come out as expected, whole, one byte per read and cut at every boundary")
    func handMadeStreams() {
        for (name, input, expected) in Self.cases {
            let whole = Self.escape(input)
            #expect(whole == (expected ?? input), "\(name): \(String(decoding: whole, as: UTF8.self))")
            #expect(Self.escape(input, cuts: Array(0..<input.count)) == whole, "\(name), one byte per read")
            for cut in 1..<min(input.count, 400) {
                #expect(Self.escape(input, cuts: [cut]) == whole, "\(name), cut at \(cut)")
            }
        }
    }

    /// Streams put together from pieces a hostile client would send, from a fixed seed.
    static func generatedStreams(_ count: Int) -> [[UInt8]] {
        var generator = SeededRandom(seed: 26)
        let lines: [String] = [
            "GET /é?q=ü HTTP/1.1", "POST / HTTP/1.1", "CONNECT a:1 HTTP/1.1", "CONNECTXYZ / HTTP/1.1", "",
            "GET / HTTP/1.1\r", "\u{80}\u{FF} \u{C3}", "PUT /x HTTP/1.0",
        ]
        let headers: [String] = [
            "Content-Length: 0", "Content-Length: 3", "Content-Length: 17", "content-length:5", "Content-Length: -1",
            "Content-Length: 9999999999999999999999", "Transfer-Encoding: chunked", "Upgrade: h2c", "Host: é",
            "Content-Length 3", "Content-Length : 3", "X: " + String(repeating: "a", count: 300),
            "Content-Length: " + String(repeating: "0", count: 260) + "1", "Ü: é", "\tContent-Length: 2", "",
        ]
        let bodies: [String] = ["", "é", "GET /é HTTP/1.1\r\n\r\n", "\r\n\r\n", "abc", "ü\r\nContent-Length: 1\r\n"]
        var streams: [[UInt8]] = []
        for _ in 0..<count {
            var text = ""
            for _ in 0..<Int.random(in: 1...4, using: &generator) {
                text += lines.randomElement(using: &generator)! + (Bool.random(using: &generator) ? "\r\n" : "\n")
                for _ in 0..<Int.random(in: 0...4, using: &generator) {
                    text += headers.randomElement(using: &generator)! + "\r\n"
                }
                text += "\r\n" + bodies.randomElement(using: &generator)!
            }
            var stream = Array(text.utf8)
            // Some raw bytes past 0x7F that are not UTF-8, anywhere.
            for _ in 0..<Int.random(in: 0...2, using: &generator) where !stream.isEmpty {
                stream[Int.random(in: 0..<stream.count, using: &generator)] = UInt8.random(
                    in: 0x80...0xFF, using: &generator)
            }
            streams.append(stream)
        }
        return streams
    }

    @Test("3,000 generated streams: the same output however they are cut into reads, and only escapes added")
    func generatedStreamsAreCutInvariant() {
        var generator = SeededRandom(seed: 27)
        for stream in Self.generatedStreams(3000) {
            let whole = Self.escape(stream)
            let shown = String(decoding: stream, as: UTF8.self).debugDescription
            #expect(
                Self.escapes(from: stream, to: whole) != nil,
                "\(shown) came out as \(String(decoding: whole, as: UTF8.self))")
            #expect(Self.escape(stream, cuts: Array(0..<stream.count)) == whole, "\(shown), one byte per read")
            let cuts = (0..<Int.random(in: 1...6, using: &generator)).map { _ in
                Int.random(in: 0...stream.count, using: &generator)
            }
            #expect(Self.escape(stream, cuts: cuts) == whole, "\(shown), cut at \(cuts)")
        }
    }

    @Test("a header line of 8 MB without a line break is read without keeping it")
    func endlessHeaderLine() {
        let escaper = RawTargetEscaper()
        let allocator = ByteBufferAllocator()
        let head = allocator.buffer(bytes: Self.bytes("GET /é HTTP/1.1\r\nX: "))
        #expect(
            escaper.escaping(head, allocator: allocator).map { Array($0.readableBytesView) }
                == Self.bytes("GET /%C3%A9 HTTP/1.1\r\nX: "))
        let piece = allocator.buffer(repeating: UInt8(ascii: "a"), count: 1 << 16)
        for _ in 0..<128 { #expect(escaper.escaping(piece, allocator: allocator) == nil) }
        #expect(escaper.keptHeaderBytes <= RawTargetEscaper.headerLineLimit)
        let rest = allocator.buffer(bytes: Self.bytes("\r\n\r\nGET /ü X\r\n\r\n"))
        #expect(
            escaper.escaping(rest, allocator: allocator).map { Array($0.readableBytesView) }
                == Self.bytes("\r\n\r\nGET /%C3%BC X\r\n\r\n"))
    }

    @Test(
        "through a recording server one byte per TCP segment: targets escaped, bodies with UTF-8 and request lines untouched"
    )
    func pipelinedBytewiseThroughServer() async throws {
        let directory = try Fixtures.temporaryDirectory()
        let upstream = try await TestUpstream.start(EscapeMatchingTests.echoTarget)
        let recorder = try await ProxyHarness.recording(upstream, cassette: directory + "/probe.json")
        let bodies = ["GET /é HTTP/1.1\r\nContent-Length: 3\r\n\r\n", "ü\r\n\r\n", "é"]
        var stream: [UInt8] = []
        for (index, body) in bodies.enumerated() {
            stream += Self.bytes(
                "POST /p\(index)?q=é HTTP/1.1\r\nHost: x\r\nContent-Length: \(body.utf8.count)\r\n\r\n" + body)
        }
        stream += Self.bytes("GET /last/ü HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        let connection = try RawConnection(port: recorder.port)
        for byte in stream { connection.send(bytes: [byte]) }
        let answers = connection.receive().text
        #expect(answers.components(separatedBy: "HTTP/1.1 200 OK").count == 5, "\(answers)")
        await recorder.stop()
        await upstream.stop()
        #expect(upstream.received.map(\.target) == ["/p0?q=%C3%A9", "/p1?q=%C3%A9", "/p2?q=%C3%A9", "/last/%C3%BC"])
        #expect(upstream.received.prefix(3).map(\.body) == bodies.map { Array($0.utf8) })
    }

    @Test("the hostile streams do not bring the server down: it answers a plain request after each")
    func serverSurvivesHostileStreams() async throws {
        let replay = try await ProxyHarness.replaying(ReadmeExampleTests.demoCassette)
        for stream in Self.cases.map(\.input) + Self.generatedStreams(40) {
            let connection = try RawConnection(port: replay.port, timeout: 5)
            connection.send(bytes: stream)
            connection.finishSending()
            _ = connection.drain(upTo: 1 << 20)
        }
        let check = try RawConnection(port: replay.port)
        check.send("GET /__kakapo/health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        #expect(check.receive().text.hasPrefix("HTTP/1.1 200"))
        await replay.stop()
    }
}
