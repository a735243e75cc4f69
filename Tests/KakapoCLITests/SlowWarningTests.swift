import Foundation
import KakapoHTTP
import KakapoTestSupport
import Testing

/// `--slow-warning SECONDS`: a request in flight that long with no bytes either way logs one line at warning
/// level saying what it waits for (the client's body, the upstream's first byte or next chunk, the client
/// reading); a quick request logs nothing, each request says it once, and 0 turns it off.
@Suite("Slow requests said in the log", .serialized)
struct SlowWarningTests {
    /// Waits (blocking the calling thread) until Kakapo's log contains `text` or `limit` seconds pass; returns
    /// the log.
    static func waitForLog(of server: KakapoProcess, containing text: String, limit: Double = 20) -> String {
        let deadline = Date().addingTimeInterval(limit)
        while Date() < deadline, !server.standardError.contains(text) { usleep(50_000) }
        return server.standardError
    }

    /// The log's `slow:` lines.
    static func slowLines(_ log: String) -> [Substring] {
        log.split(separator: "\n").filter { $0.contains("slow: ") }
    }

    /// Runs `work` with a raw connection to `port` on a thread of its own (its calls block).
    static func onConnection<T: Sendable>(port: Int, _ work: @escaping @Sendable (RawConnection) -> T) async throws -> T
    {
        try await withCheckedThrowingContinuation { continuation in
            Thread {
                do {
                    let connection = try RawConnection(port: port, timeout: 30)
                    continuation.resume(returning: work(connection))
                } catch {
                    continuation.resume(throwing: error)
                }
            }.start()
        }
    }

    static let ok = HTTP.Response(status: 200, headers: ["Content-Type": "text/plain"], body: Array("ok".utf8))

    @Test("a request waiting for a slow upstream logs one warning naming it; a quick request logs nothing")
    func slowUpstream() async throws {
        let upstream = try await TestUpstream.start { request in
            request.target.hasPrefix("/slow") ? .delayed(seconds: 3.5, reply: .response(Self.ok)) : .response(Self.ok)
        }
        defer { Task { await upstream.stop() } }
        let cassette = try Fixtures.temporaryDirectory() + "/slow.json"
        let server = try KakapoProcess([
            "record", "--cassette", cassette, "--upstream", upstream.baseURL, "--port", "0", "--slow-warning", "1",
        ])
        let port = try await server.waitUntilListening()
        let client = try TestClient(port: port)
        defer { client.shutdown() }
        #expect(try await client.send(.get, "/fast").status == 200)
        #expect(try await client.send(.get, "/slow").status == 200)
        server.send(SIGINT)
        #expect(try await server.waitForExit() == 0)
        let lines = Self.slowLines(server.standardError)
        // One line, though the request waited over three sweeps.
        #expect(lines.count == 1, "\(server.standardError)")
        let line = try #require(lines.first)
        #expect(line.contains(" warning kakapo:"), "\(line)")
        #expect(line.contains("slow: GET /slow has waited"), "\(line)")
        #expect(line.contains("for the upstream's first byte (\(upstream.baseURL))"), "\(line)")
        #expect(!server.standardError.contains("slow: GET /fast"), "\(server.standardError)")
    }

    @Test("a client that sends half its body and stalls is said to be waited for, with the bytes so far")
    func stalledBody() async throws {
        let upstream = try await TestUpstream.start { _ in .response(Self.ok) }
        defer { Task { await upstream.stop() } }
        let cassette = try Fixtures.temporaryDirectory() + "/stalled.json"
        let server = try KakapoProcess([
            "record", "--cassette", cassette, "--upstream", upstream.baseURL, "--port", "0", "--slow-warning", "1",
        ])
        let port = try await server.waitUntilListening()
        let (log, answer) = try await Self.onConnection(port: port) { connection in
            connection.send("POST /upload HTTP/1.1\r\nHost: localhost\r\nContent-Length: 100\r\n\r\n")
            connection.send(String(repeating: "a", count: 40))
            let log = Self.waitForLog(of: server, containing: "request body")
            // The rest comes: the request is answered as usual.
            connection.send(String(repeating: "b", count: 60))
            return (log, connection.receiveHead().head)
        }
        let line = Self.slowLines(log).first
        #expect(line?.contains(" warning kakapo:") == true, "\(log)")
        #expect(line?.contains("slow: POST /upload has waited") == true, "\(log)")
        #expect(line?.contains("for the client's request body (40 bytes so far)") == true, "\(log)")
        #expect(answer.hasPrefix("HTTP/1.1 200"), "\(answer)")
        server.send(SIGINT)
        #expect(try await server.waitForExit() == 0)
        #expect(Self.slowLines(server.standardError).count == 1, "\(server.standardError)")
    }

    @Test("an event stream whose upstream pauses logs one line waiting for its next chunk")
    func pausedStream() async throws {
        let events: HTTP.Headers = ["Content-Type": "text/event-stream"]
        let upstream = try await TestUpstream.start { _ in
            .paced(headers: events, chunks: [Array("data: 1\n\n".utf8), Array("data: 2\n\n".utf8)], gap: 3.5)
        }
        defer { Task { await upstream.stop() } }
        let server = try KakapoProcess([
            "serve", "--mode", "passthrough", "--upstream", upstream.baseURL, "--port", "0", "--slow-warning", "1",
        ])
        let port = try await server.waitUntilListening()
        let (head, bytes) = try await Self.onConnection(port: port) { connection in
            connection.send("GET /events HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
            let (head, first) = connection.receiveHead()
            return (head, first + connection.drain(upTo: .max))
        }
        #expect(head.hasPrefix("HTTP/1.1 200"), "\(head)")
        #expect(bytes > 0)
        server.send(SIGINT)
        #expect(try await server.waitForExit() == 0)
        let lines = Self.slowLines(server.standardError)
        #expect(lines.count == 1, "\(server.standardError)")
        #expect(lines.first?.contains("slow: GET /events has waited") == true, "\(server.standardError)")
        #expect(lines.first?.contains("for the upstream's next chunk") == true, "\(server.standardError)")
    }

    @Test("a client that does not read a large answer is said to be waited for")
    func clientNotReading() async throws {
        let upstream = try await TestUpstream.start { _ in .generated(size: 256 << 20, announcesLength: true) }
        defer { Task { await upstream.stop() } }
        let server = try KakapoProcess([
            "serve", "--mode", "passthrough", "--upstream", upstream.baseURL, "--port", "0", "--slow-warning", "1",
        ])
        let port = try await server.waitUntilListening()
        let log = try await Self.onConnection(port: port) { connection in
            connection.send("GET /big HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
            // Nothing is read: Kakapo's socket buffer fills and the upstream is held back.
            let log = Self.waitForLog(of: server, containing: "for the client to read")
            connection.closeNow()
            return log
        }
        let line = Self.slowLines(log).first
        #expect(line?.contains("slow: GET /big has waited") == true, "\(log)")
        #expect(line?.contains("for the client to read") == true, "\(log)")
        server.send(SIGINT)
        _ = try await server.waitForExit()
    }

    @Test("--slow-warning 0 says nothing of a slow request; a negative value is refused")
    func turnedOff() async throws {
        let upstream = try await TestUpstream.start { _ in .delayed(seconds: 2.5, reply: .response(Self.ok)) }
        defer { Task { await upstream.stop() } }
        let server = try KakapoProcess([
            "serve", "--mode", "passthrough", "--upstream", upstream.baseURL, "--port", "0", "--slow-warning", "0",
        ])
        let port = try await server.waitUntilListening()
        let client = try TestClient(port: port)
        defer { client.shutdown() }
        #expect(try await client.send(.get, "/slow").status == 200)
        server.send(SIGINT)
        #expect(try await server.waitForExit() == 0)
        #expect(Self.slowLines(server.standardError).isEmpty, "\(server.standardError)")

        let refused = try await KakapoProcess.run(["replay", "--cassette", "x.json", "--slow-warning=-1"])
        #expect(refused.status == 2)
        #expect(refused.error.contains("--slow-warning must be from 0 (off) to 86400 seconds"), "\(refused.error)")
    }
}
