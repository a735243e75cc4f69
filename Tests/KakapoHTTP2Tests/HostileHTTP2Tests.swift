import Foundation
import KakapoTestSupport
import Testing

/// Hostile HTTP/2 input on raw frames (H2Peer): each is refused with the error code RFC 9113 gives it
/// (a GOAWAY for connection errors, a RST_STREAM or an answer for one stream's), and the server answers
/// the next client as if nothing happened.
@Suite(
    "HTTP/2 hostile input", .serialized,
    .enabled(if: H2Peer.isAvailable, "the venv has no h2: run tools/http2.sh install"))
struct HostileHTTP2Tests {
    /// RFC 9113 7 error codes.
    static let protocolError = 1
    static let frameSizeError = 6
    static let refusedStream = 7
    static let compressionError = 9
    static let enhanceYourCalm = 11

    @Test(
        "malformed frames and floods end the connection with the right GOAWAY, and the server carries on",
        arguments: [
            ("not-settings-first", protocolError),
            ("settings-bad-length", frameSizeError),
            ("oversized-frame", frameSizeError),
            ("bad-hpack", compressionError),
            ("data-on-stream-0", protocolError),
            ("data-on-idle-stream", protocolError),
            ("rapid-reset", enhanceYourCalm),
            ("ping-flood", enhanceYourCalm),
            ("settings-flood", enhanceYourCalm),
        ])
    func connectionErrors(_ hostile: String, code: Int) async throws {
        let (routes, _, _) = try ListenerHTTP2Tests.fixtures()
        let server = try KakapoProcess(["serve", "--routes", routes, "--port", "0"])
        let port = try await server.waitUntilListening()
        let outcome = try await H2Peer.run([hostile], port: port)
        #expect(outcome.goAway == code, "\(hostile): \(outcome.raw.prefix(400))")
        if hostile != "rapid-reset" {
            // (A stream of the rapid reset may be answered before its reset is read: that is allowed.)
            #expect(outcome.streams.values.allSatisfy { $0.status == nil }, "\(hostile) was answered")
        }
        let fresh = try await H2Curl.run(["--http2-prior-knowledge", "http://127.0.0.1:\(port)/hello/after"])
        #expect(fresh.status == 200, "\(fresh.error)")
        #expect(fresh.body.contains(#""hello":"after""#))
        server.send(SIGINT)
        #expect(try await server.waitForExit() == 0, "\(server.standardError)")
    }

    @Test("a stream error resets that stream alone: the connection goes on and its next stream is answered")
    func streamErrorKeepsTheConnection() async throws {
        let (routes, _, _) = try ListenerHTTP2Tests.fixtures()
        let server = try KakapoProcess(["serve", "--routes", routes, "--port", "0"])
        let port = try await server.waitUntilListening()
        let outcome = try await H2Peer.run(["stream-error"], port: port)
        // RFC 9113 5.1: DATA on a half-closed (remote) stream is a stream error STREAM_CLOSED (5).
        #expect(outcome.resets[1] == 5, "\(outcome.raw.prefix(400))")
        #expect(outcome.goAway == nil, "\(outcome.raw.prefix(400))")
        #expect(outcome.streams[3]?.status == 200, "\(outcome.raw.prefix(400))")
        #expect(outcome.streams[3]?.body.contains(#""hello":"two""#) == true, "\(outcome.raw.prefix(400))")
        server.send(SIGINT)
        #expect(try await server.waitForExit() == 0, "\(server.standardError)")
    }

    @Test("more streams than SETTINGS_MAX_CONCURRENT_STREAMS are refused, and the server carries on")
    func tooManyStreams() async throws {
        let (routes, _, _) = try ListenerHTTP2Tests.fixtures()
        let server = try KakapoProcess(["serve", "--routes", routes, "--port", "0"])
        let port = try await server.waitUntilListening()
        let outcome = try await H2Peer.run(["too-many-streams"], port: port)
        // RFC 9113 5.1.2: PROTOCOL_ERROR or REFUSED_STREAM; NIOHTTP2 makes it the connection's.
        let refused =
            outcome.goAway == Self.protocolError
            || outcome.resets[201].map { [Self.protocolError, Self.refusedStream].contains($0) } == true
        #expect(refused, "\(outcome.raw.prefix(400))")
        let fresh = try await H2Curl.run(["--http2-prior-knowledge", "http://127.0.0.1:\(port)/hello/after"])
        #expect(fresh.status == 200, "\(fresh.error)")
        server.send(SIGINT)
        #expect(try await server.waitForExit() == 0)
    }

    @Test("a body over --max-body-size is answered 413 on its stream, not buffered, and the connection stays usable")
    func bodyTooLarge() async throws {
        let (routes, _, _) = try ListenerHTTP2Tests.fixtures()
        let server = try KakapoProcess(["serve", "--routes", routes, "--port", "0", "--max-body-size", "1000"])
        let port = try await server.waitUntilListening()
        let outcome = try await H2Peer.run(["large-body", "5000000"], port: port)
        #expect(outcome.goAway == nil, "\(outcome.raw.prefix(400))")
        #expect(outcome.streams[1]?.status == 413, "\(outcome.raw.prefix(400))")
        #expect(outcome.streams[1]?.body.contains("larger than the limit of 1000 bytes") == true)
        // Within the limit, the same route answers.
        let small = try await H2Curl.run([
            "--http2-prior-knowledge", "-H", "content-type: application/json", "-d", #"{"name":"ok"}"#,
            "http://127.0.0.1:\(port)/echo",
        ])
        #expect(small.status == 201, "\(small.error)")
        server.send(SIGINT)
        #expect(try await server.waitForExit() == 0)
    }
}
