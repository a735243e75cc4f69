import Foundation
import KakapoTestSupport

/// An HTTP/2 client on raw frames (Python, with the `hpack` that comes with the venv's `h2`; tools/http2.sh
/// installs it): several requests multiplexed on one connection, and hostile input. It prints one JSON
/// object: the GOAWAY error code, RST_STREAM codes by stream, and each stream's headers and body.
enum H2Peer {
    /// The venv's python.
    static let python = PythonWebSocketPeer.python

    /// Whether the venv has `h2` (and so `hpack`). Under CI (`CI=true`, where tools/http2.sh installs it)
    /// always true, so a missing install fails the tests instead of skipping them.
    static let isAvailable =
        ProcessInfo.processInfo.environment["CI"] == "true"
        || (try? KakapoProcess.runBlocking(["-c", "import h2, hpack"], executable: python)) == 0

    /// What the server sent back on one connection.
    struct Outcome {
        /// The GOAWAY's error code, nil when none came.
        let goAway: Int?
        /// RST_STREAM error codes by stream.
        let resets: [Int: Int]
        /// Each stream's `:status`, headers (lower case) and body.
        let streams: [Int: (status: Int?, headers: [(String, String)], body: String)]
        let raw: String
    }

    /// Runs a case of the script against `port`: `requests` with "METHOD PATH [BODY]" arguments, or a
    /// hostile case by name.
    static func run(_ arguments: [String], port: Int) async throws -> Outcome {
        let script = try Fixtures.temporaryDirectory() + "/h2peer.py"
        try source.write(toFile: script, atomically: true, encoding: .utf8)
        let result = try await KakapoProcess.run(
            [script, arguments[0], String(port)] + arguments.dropFirst(), executable: python)
        guard result.status == 0,
            let object = try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: Any]
        else {
            throw KakapoProcessError("h2peer.py \(arguments[0]) failed (\(result.status)): \(result.error)")
        }
        var streams: [Int: (status: Int?, headers: [(String, String)], body: String)] = [:]
        for (key, value) in object["streams"] as? [String: [String: Any]] ?? [:] {
            let fields = (value["headers"] as? [[String]] ?? []).map { ($0[0], $0[1]) }
            let status = fields.first { $0.0 == ":status" }.flatMap { Int($0.1) }
            streams[Int(key) ?? -1] = (status, fields.filter { !$0.0.hasPrefix(":") }, value["body"] as? String ?? "")
        }
        var resets: [Int: Int] = [:]
        for (key, value) in object["rst"] as? [String: Int] ?? [:] { resets[Int(key) ?? -1] = value }
        return Outcome(goAway: object["goaway"] as? Int, resets: resets, streams: streams, raw: result.output)
    }

    /// A failure of the peer itself, not of the server under test.
    struct KakapoProcessError: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    static let source = #"""
        # An HTTP/2 client for Kakapo's tests, on raw frames (Python's hpack for header blocks): well-behaved
        # multiplexed requests, and hostile input. Prints one JSON object: what the server sent back.
        import json, socket, struct, sys, time
        import hpack

        PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"

        def frame(kind, flags, stream, payload=b""):
            return struct.pack(">I", len(payload))[1:] + bytes([kind, flags]) + struct.pack(">I", stream) + payload

        def settings(pairs=()):
            return frame(4, 0, 0, b"".join(struct.pack(">HI", k, v) for k, v in pairs))

        def headers(encoder, stream, method, path, port, end=True, extra=()):
            block = encoder.encode([(":method", method), (":path", path), (":scheme", "http"),
                                    (":authority", "127.0.0.1:%d" % port)] + list(extra))
            return frame(1, 0x4 | (0x1 if end else 0), stream, block)

        def read_all(sock, seconds, until=None):
            """Frames the server sends within `seconds` (or until `until(result)` holds, or it closes)."""
            decoder = hpack.Decoder()
            decoder.max_allowed_table_size = 65536
            result = {"goaway": None, "rst": {}, "streams": {}, "closed": False}
            buf = b""
            sock.settimeout(0.2)
            deadline = time.time() + seconds
            while time.time() < deadline:
                try:
                    data = sock.recv(65536)
                except socket.timeout:
                    if until and until(result): break
                    continue
                except OSError:
                    result["closed"] = True
                    break
                if not data:
                    result["closed"] = True
                    break
                buf += data
                while len(buf) >= 9:
                    length = int.from_bytes(buf[:3], "big")
                    if len(buf) < 9 + length: break
                    kind, flags = buf[3], buf[4]
                    stream = int.from_bytes(buf[5:9], "big") & 0x7FFFFFFF
                    payload, buf = buf[9:9 + length], buf[9 + length:]
                    entry = result["streams"].setdefault(str(stream), {"headers": [], "body": "", "ended": False})
                    if kind == 1:
                        entry["headers"] += [[n, v] for n, v in decoder.decode(payload)]
                    elif kind == 0:
                        entry["body"] += payload.decode("utf-8", "replace")
                    elif kind == 7:
                        result["goaway"] = int.from_bytes(payload[4:8], "big")
                    elif kind == 3:
                        result["rst"][str(stream)] = int.from_bytes(payload[:4], "big")
                    elif kind == 4 and not flags & 1:
                        # (The server may have closed already: what it sent is still read.)
                        try: sock.sendall(frame(4, 1, 0))
                        except OSError: pass
                    if kind in (0, 1) and flags & 1:
                        entry["ended"] = True
                if until and until(result): break
            result["streams"] = {k: v for k, v in result["streams"].items() if k != "0"}
            return result

        def main():
            case, port = sys.argv[1], int(sys.argv[2])
            sock = socket.create_connection(("127.0.0.1", port))
            encoder = hpack.Encoder()
            send = sock.sendall
            if case == "requests":
                # Every request at once on one connection, then every answer: METHOD PATH [BODY] per argument.
                send(PREFACE + settings())
                streams = []
                for number, spec in enumerate(sys.argv[3:]):
                    method, path, *body = spec.split(" ", 2)
                    stream = 1 + 2 * number
                    streams.append(str(stream))
                    # "POST*" sends its body without a content-length, as gRPC clients do.
                    unsized = method.endswith("*")
                    method = method.rstrip("*")
                    extra = [("content-length", str(len(body[0].encode())))] if body and not unsized else []
                    send(headers(encoder, stream, method, path, port, end=not body, extra=extra))
                    if body: send(frame(0, 1, stream, body[0].encode()))
                done = lambda r: all(r["streams"].get(s, {}).get("ended") or s in r["rst"] for s in streams)
                print(json.dumps(read_all(sock, 10, done)))
                return
            send(PREFACE)
            if case == "not-settings-first":
                send(frame(6, 0, 0, b"12345678"))
            elif case == "settings-bad-length":
                send(frame(4, 0, 0, b"\x00\x03\x00"))
            elif case == "oversized-frame":
                # The server may close (GOAWAY, then a reset for the unread rest) before all of it is sent.
                try: send(settings() + frame(1, 0x4, 1, b"\x00" * 20000))
                except OSError: pass
            elif case == "bad-hpack":
                send(settings() + frame(1, 0x5, 1, b"\xff\xff\xff\xff\xff\xff\xff\xff\x7f"))
            elif case == "data-on-stream-0":
                send(settings() + frame(0, 0, 0, b"hello"))
            elif case == "data-on-idle-stream":
                # RFC 9113 5.1: a frame other than HEADERS or PRIORITY on an idle stream is a connection error.
                send(settings() + frame(0, 0x1, 3, b"x"))
            elif case == "rapid-reset":
                # CVE-2023-44487: streams opened and reset at once, as fast as the socket takes them.
                send(settings())
                batch = b""
                for number in range(2000):
                    stream = 1 + 2 * number
                    batch += headers(encoder, stream, "GET", "/hello", port, end=True) + frame(3, 0, stream, b"\x00\x00\x00\x08")
                try: send(batch)
                except OSError: pass
            elif case == "ping-flood":
                send(settings())
                try: send(frame(6, 0, 0, b"pingpong") * 50000)
                except OSError: pass
            elif case == "settings-flood":
                try: send(settings() * 50000)
                except OSError: pass
            elif case == "too-many-streams":
                # Streams opened and left open (no END_STREAM): past SETTINGS_MAX_CONCURRENT_STREAMS.
                send(settings())
                for number in range(101):
                    send(headers(encoder, 1 + 2 * number, "POST", "/echo", port, end=False,
                                 extra=[("content-length", "10")]))
            elif case == "open-grpc":
                # A gRPC call that sends one message and keeps its request open, as a watch does: read until the
                # stream is reset (the answer's trailers come before).
                message = b"\x0a\x05watch"
                send(settings() + headers(encoder, 1, "POST", "/shapes.Shapes/Echo", port, end=False,
                                           extra=[("content-type", "application/grpc"), ("te", "trailers")]))
                send(frame(0, 0, 1, b"\x00" + struct.pack(">I", len(message)) + message))
                print(json.dumps(read_all(sock, 15, lambda r: "1" in r["rst"] or r["closed"])))
                return
            elif case == "stream-error":
                # DATA after a stream's END_STREAM (a stream error, STREAM_CLOSED), then another stream on the
                # same connection: read until that one ends, or the connection closes.
                send(settings() + headers(encoder, 1, "GET", "/hello/one", port, end=True) + frame(0, 0, 1, b"late"))
                time.sleep(0.3)
                send(headers(encoder, 3, "GET", "/hello/two", port, end=True))
                print(json.dumps(read_all(sock, 10, lambda r: r["streams"].get("3", {}).get("ended") or r["closed"])))
                return
            elif case == "large-body":
                # A body over --max-body-size (the 2nd argument after the port), sent without waiting.
                size = int(sys.argv[3])
                send(settings() + headers(encoder, 1, "POST", "/echo", port, end=False,
                                           extra=[("content-type", "application/json"), ("content-length", str(size))]))
                sent = 0
                while sent < size:
                    piece = min(16384, size - sent)
                    try: send(frame(0, 1 if sent + piece == size else 0, 1, b"x" * piece))
                    except OSError: break
                    sent += piece
            print(json.dumps(read_all(sock, 5, lambda r: r["goaway"] is not None or r["rst"] or r["closed"] or
                                      any(s.get("ended") for s in r["streams"].values()))))

        main()
        """#
}
