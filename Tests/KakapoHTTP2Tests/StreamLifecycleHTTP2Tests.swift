import Foundation
import Kakapo
import KakapoHTTP2
import KakapoTestSupport
import Testing

/// How HTTP/2 streams and connections end when the client does not play along: a stream refused on its
/// first HEADERS, a client that never acknowledges the closing GOAWAY's PING, a client that grants no
/// flow-control window. Raw frames from a small Python peer (the venv's `hpack`); the server runs as the
/// built `kakapo` where a crash must show, in process where the grace period must be short.
@Suite(
    "HTTP/2 stream and connection ends", .serialized,
    .enabled(if: H2Peer.isAvailable, "the venv has no h2: run tools/http2.sh install"))
struct StreamLifecycleHTTP2Tests {
    @Test("a CONNECT is answered 405 and a request with no :authority 400, and idleness still closes the connection")
    func refusedOnFirstHeaders() async throws {
        let (routes, _, _) = try ListenerHTTP2Tests.fixtures()
        let server = try KakapoProcess(["serve", "--routes", routes, "--port", "0", "--idle-timeout", "1"])
        let port = try await server.waitUntilListening()
        let outcome = try await Self.peer(["refusals", String(port)])
        #expect(outcome["1"] as? Int == 405, "\(outcome)")
        #expect((outcome["1body"] as? String)?.contains("CONNECT over HTTP/2 is not supported") == true)
        #expect(outcome["3"] as? Int == 400, "\(outcome)")
        #expect((outcome["3body"] as? String)?.contains(":authority") == true, "\(outcome)")
        // Both streams ended as far as the connection is concerned: idle, it says GOAWAY and closes.
        #expect(outcome["goaway"] as? Int == 0, "\(outcome)")
        #expect(outcome["closed"] as? Bool == true, "\(outcome)")
        let fresh = try await H2Curl.run(["--http2-prior-knowledge", "http://127.0.0.1:\(port)/hello/after"])
        #expect(fresh.status == 200, "\(fresh.error)")
        server.send(SIGINT)
        #expect(try await server.waitForExit() == 0, "\(server.standardError)")
    }

    @Test("a client that never acknowledges the closing GOAWAY's PING is closed after the grace period")
    func silentClientIsClosed() async throws {
        let server = try ProxyServer(
            configuration: ProxyConfiguration(port: 0, idleTimeout: 1, shutdownGracePeriod: 1), http2: HTTP2Server())
        let port = try await server.start()
        let started = ContinuousClock.now
        let outcome = try await Self.peer(["silent", String(port)])
        #expect(outcome["goaway"] as? Int == 0, "\(outcome)")
        #expect(outcome["closed"] as? Bool == true, "never closed: \(outcome)")
        // Idle 1 s, grace 1 s: well under the peer's 20 s.
        #expect(ContinuousClock.now - started < .seconds(15))
        await server.shutdown()
    }

    @Test("a stream stalled by a zero flow-control window is reset, and the connection and server still answer")
    func zeroWindowStallIsReset() async throws {
        let server = try ProxyServer(
            configuration: ProxyConfiguration(port: 0, idleTimeout: 1, shutdownGracePeriod: 1), http2: HTTP2Server())
        let big = String(repeating: "x", count: 8 << 20)
        server.router.get("/big") { _ in Response(statusCode: 200, body: big) }
        server.router.get("/small") { _ in Response(statusCode: 200, body: "small") }
        let port = try await server.start()
        let outcome = try await Self.peer(["stall", String(port)])
        // RST_STREAM CANCEL on the stalled stream, well before the peer's 20 s.
        #expect(outcome["rst1"] as? Int == 8, "\(outcome)")
        #expect((outcome["rstAfter"] as? Double).map { $0 < 15 } == true, "\(outcome)")
        // Another stream on the same connection (given window) is answered after the reset.
        #expect(outcome["3"] as? Int == 200, "\(outcome)")
        #expect((outcome["3body"] as? String)?.contains("small") == true, "\(outcome)")
        let fresh = try await H2Curl.run(["--http2-prior-knowledge", "http://127.0.0.1:\(port)/small"])
        #expect(fresh.status == 200, "\(fresh.error)")
        #expect(fresh.body.contains("small"))
        await server.shutdown()
    }

    @Test(
        "an answer the upstream breaks off midway is reset INTERNAL_ERROR, not CANCEL (which gRPC reads as CANCELLED)")
    func brokenAnswerIsResetInternalError() async throws {
        let upstream = try await H2Upstream.start()
        let cassette = try Fixtures.temporaryDirectory() + "/broken.json"
        let recorder = try KakapoProcess([
            "record", "--upstream", "h2c://127.0.0.1:\(upstream.port)", "--cassette", cassette, "--port", "0",
        ])
        let port = try await recorder.waitUntilListening()
        let outcome = try await H2Peer.run(["requests", "GET /broken-stream"], port: port)
        #expect(outcome.streams[1]?.status == 200, "\(outcome.raw.prefix(400))")
        #expect(outcome.resets[1] == 2, "\(outcome.raw.prefix(400))")
        recorder.send(SIGINT)
        #expect(try await recorder.waitForExit() == 0)
        try await upstream.stop()
    }

    @Test(
        "a whole answer sent while the request is still open is followed by RST_STREAM NO_ERROR, not CANCEL (which grpcio could read before the status)"
    )
    func answerBeforeRequestEndIsResetNoError() async throws {
        let (routes, _, _) = try ListenerHTTP2Tests.fixtures()
        let server = try KakapoProcess(["serve", "--routes", routes, "--port", "0"])
        let port = try await server.waitUntilListening()
        for _ in 0..<3 {
            let outcome = try await H2Peer.run(["open-grpc"], port: port)
            let stream = outcome.streams[1]
            #expect(stream?.status == 200, "\(outcome.raw.prefix(600))")
            #expect(stream?.headers.contains { $0 == ("grpc-status", "12") } == true, "\(outcome.raw.prefix(600))")
            // RFC 9113 8.1: "stop sending, without error".
            #expect(outcome.resets[1] == 0, "\(outcome.raw.prefix(600))")
        }
        server.send(SIGINT)
        #expect(try await server.waitForExit() == 0, "\(server.standardError)")
    }

    /// Runs a case of the peer script; it prints one JSON object.
    static func peer(_ arguments: [String]) async throws -> [String: Any] {
        let script = try Fixtures.temporaryDirectory() + "/h2ends.py"
        try source.write(toFile: script, atomically: true, encoding: .utf8)
        let result = try await KakapoProcess.run([script] + arguments, executable: H2Peer.python)
        guard result.status == 0,
            let object = try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: Any]
        else {
            throw H2Peer.KakapoProcessError("h2ends.py \(arguments[0]) failed (\(result.status)): \(result.error)")
        }
        return object
    }

    static let source = #"""
        # Raw HTTP/2 frames for the stream- and connection-end tests. Prints one JSON object: each stream's
        # :status ("1") and body ("1body"), RST_STREAM codes ("rst1") with the seconds until the first
        # ("rstAfter"), the GOAWAY's error code, and whether the server closed the connection.
        import json, socket, struct, sys, time
        import hpack

        PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"

        def frame(kind, flags, stream, payload=b""):
            return struct.pack(">I", len(payload))[1:] + bytes([kind, flags]) + struct.pack(">I", stream) + payload

        def settings(pairs=()):
            return frame(4, 0, 0, b"".join(struct.pack(">HI", k, v) for k, v in pairs))

        def main():
            case, port = sys.argv[1], int(sys.argv[2])
            authority = "127.0.0.1:%d" % port
            sock = socket.create_connection(("127.0.0.1", port))
            encoder, decoder = hpack.Encoder(), hpack.Decoder()
            out = {"goaway": None, "closed": False}
            ack_pings = case != "silent"
            started = time.time()
            if case == "refusals":
                sock.sendall(PREFACE + settings())
                sock.sendall(frame(1, 0x4, 1, encoder.encode([(":method", "CONNECT"), (":authority", "example.com:443")])))
                sock.sendall(frame(1, 0x5, 3, encoder.encode([(":method", "GET"), (":scheme", "http"), (":path", "/hello/x")])))
            elif case == "silent":
                # Its SETTINGS are acknowledged (below), its PINGs never.
                sock.sendall(PREFACE + settings())
            elif case == "stall":
                # No window for any stream's data (SETTINGS_INITIAL_WINDOW_SIZE 0), and no WINDOW_UPDATE for stream 1.
                sock.sendall(PREFACE + settings([(4, 0)]))
                sock.sendall(frame(1, 0x5, 1, encoder.encode([(":method", "GET"), (":scheme", "http"), (":path", "/big"), (":authority", authority)])))
            buf = b""
            sock.settimeout(0.2)
            deadline = started + 20
            asked_small = False
            while time.time() < deadline:
                try:
                    data = sock.recv(1 << 20)
                except socket.timeout:
                    continue
                except OSError:
                    out["closed"] = True
                    break
                if not data:
                    out["closed"] = True
                    break
                buf += data
                while len(buf) >= 9:
                    length = int.from_bytes(buf[:3], "big")
                    if len(buf) < 9 + length: break
                    kind, flags = buf[3], buf[4]
                    stream = int.from_bytes(buf[5:9], "big") & 0x7FFFFFFF
                    payload, buf = buf[9:9 + length], buf[9 + length:]
                    key = str(stream)
                    if kind == 1:
                        for name, value in decoder.decode(payload):
                            if name == ":status": out[key] = int(value)
                    elif kind == 0:
                        out[key + "body"] = out.get(key + "body", "") + payload.decode("utf-8", "replace")
                    elif kind == 3:
                        out["rst" + key] = int.from_bytes(payload[:4], "big")
                        out.setdefault("rstAfter", time.time() - started)
                    elif kind == 7:
                        out["goaway"] = int.from_bytes(payload[4:8], "big")
                    elif kind == 4 and not flags & 1:
                        sock.sendall(frame(4, 1, 0))
                    elif kind == 6 and not flags & 1 and ack_pings:
                        sock.sendall(frame(6, 1, 0, payload))
                if case == "stall" and "rst1" in out and not asked_small:
                    # Stream 3 gets window of its own (and the connection has 64 KiB): it is answered.
                    asked_small = True
                    sock.sendall(frame(1, 0x5, 3, encoder.encode([(":method", "GET"), (":scheme", "http"), (":path", "/small"), (":authority", authority)])))
                    sock.sendall(frame(8, 0, 3, struct.pack(">I", 1 << 20)))
                if case == "stall" and "small" in out.get("3body", ""):
                    break
            print(json.dumps(out))

        main()
        """#
}
