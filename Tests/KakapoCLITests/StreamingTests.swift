import Foundation
import KakapoCassette
import KakapoHTTP
import KakapoTestSupport
import Testing

/// Bodies streamed through: large and chunked answers reach the client as they arrive, a slow client
/// slows the upstream down instead of growing Kakapo's memory, and a stream may last longer than
/// `--timeout` as long as it keeps sending.
@Suite("Streaming through", .serialized)
struct StreamingTests {
    /// Sends `request` on a raw connection and counts what comes back until the server closes (the
    /// request says `Connection: close`), on a thread of its own.
    static func download(port: Int, request: String, timeout: Double = 60) async -> (head: String, body: Int) {
        await withCheckedContinuation { continuation in
            Thread {
                guard let connection = try? RawConnection(port: port, timeout: timeout) else {
                    continuation.resume(returning: ("", 0))
                    return
                }
                connection.send(request)
                let (head, first) = connection.receiveHead()
                continuation.resume(returning: (head, first + connection.drain(upTo: .max)))
            }.start()
        }
    }

    /// Kakapo's peak memory grew by less than 64 MiB since `before` (where /proc tells).
    static func expectSmallGrowth(
        of server: KakapoProcess, since before: (resident: Int, peak: Int)?,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        guard let before, let after = server.memory else { return }
        #expect(
            after.peak - before.resident < 64 << 20, "peak \(after.peak >> 20) MiB from \(before.resident >> 20)",
            sourceLocation: sourceLocation)
    }

    /// Stops Kakapo (which must exit cleanly) and the upstream.
    static func stop(_ server: KakapoProcess, _ upstream: TestUpstream) async throws {
        server.send(SIGINT)
        #expect(try await server.waitForExit() == 0)
        await upstream.stop()
    }

    @Test("a 1 GiB download passes through with its length, Kakapo's memory growing by less than 64 MiB")
    func bigDownload() async throws {
        let size = 1 << 30
        let upstream = try await TestUpstream.start { _ in .generated(size: size, announcesLength: true) }
        let server = try KakapoProcess([
            "serve", "--upstream", upstream.baseURL, "--mode", "passthrough", "--port", "0",
        ])
        let port = try await server.waitUntilListening()
        let before = server.memory
        let (head, body) = await Self.download(
            port: port, request: "GET /big HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        #expect(head.hasPrefix("HTTP/1.1 200"), "\(head)")
        #expect(head.contains("Content-Length: \(size)"), "\(head)")
        #expect(body == size)
        Self.expectSmallGrowth(of: server, since: before)
        try await Self.stop(server, upstream)
    }

    @Test("a 200 MiB upload streams to the upstream in passthrough, Kakapo's memory growing by less than 64 MiB")
    func bigUpload() async throws {
        let size = 200 << 20
        let upstream = try await TestUpstream.start { request in
            .response(
                HTTP.Response(
                    status: 200, contentType: "text/plain",
                    text: "received \(request.headers["X-Test-Body-Bytes"] ?? String(request.body.count)) bytes"))
        }
        let server = try KakapoProcess([
            "serve", "--upstream", upstream.baseURL, "--mode", "passthrough", "--port", "0",
        ])
        let port = try await server.waitUntilListening()
        let before = server.memory
        // Buffered, it would be refused: 200 MiB is over --max-body-size (64 MiB).
        let reply: String = await withCheckedContinuation { continuation in
            Thread {
                guard let connection = try? RawConnection(port: port, timeout: 60) else {
                    continuation.resume(returning: "")
                    return
                }
                connection.send(
                    "PUT /upload HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/octet-stream\r\n"
                        + "Content-Length: \(size)\r\nConnection: close\r\n\r\n")
                let piece = (0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0) }
                for _ in 0..<(size >> 20) { connection.send(bytes: piece) }
                continuation.resume(returning: connection.receive().text)
            }.start()
        }
        #expect(reply.hasPrefix("HTTP/1.1 200"), "\(reply)")
        #expect(reply.hasSuffix("received \(size) bytes"), "\(reply)")
        #expect(upstream.received.first?.method == .put)
        Self.expectSmallGrowth(of: server, since: before)
        try await Self.stop(server, upstream)
    }

    @Test("a slow client holds the upstream back; when it leaves, the transfer stops and the server goes on")
    func backpressure() async throws {
        let size = 512 << 20
        let upstream = try await TestUpstream.start { request in
            request.path == "/ok"
                ? .response(HTTP.Response(status: 200, contentType: "text/plain", text: "ok"))
                : .generated(size: size, announcesLength: false)
        }
        let server = try KakapoProcess([
            "serve", "--upstream", upstream.baseURL, "--mode", "passthrough", "--port", "0",
        ])
        let port = try await server.waitUntilListening()
        let before = server.memory
        let connection = try RawConnection(port: port, timeout: 10)
        connection.send("GET /slow HTTP/1.1\r\nHost: localhost\r\n\r\n")
        #expect(connection.drain(upTo: 1 << 20) == 1 << 20)
        // The client stops reading: socket buffers and Kakapo's window fill up, then the upstream waits.
        try await Task.sleep(for: .milliseconds(1500))
        let sent = upstream.generatedBytes
        #expect(sent < 64 << 20, "the upstream sent \(sent >> 20) MiB to a client that read 1 MiB")
        Self.expectSmallGrowth(of: server, since: before)
        connection.closeNow()
        try await Task.sleep(for: .milliseconds(500))
        let abandoned = upstream.generatedBytes
        try await Task.sleep(for: .milliseconds(500))
        #expect(upstream.generatedBytes - abandoned < 8 << 20, "the transfer went on after the client left")
        #expect(upstream.generatedBytes < size / 2)
        let (head, _) = await Self.download(
            port: port, request: "GET /ok HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n", timeout: 10)
        #expect(head.hasPrefix("HTTP/1.1 200"), "\(head)")
        try await Self.stop(server, upstream)
    }

    @Test("a chunked answer is streamed while recording and recorded whole; a quiet stream outlives --timeout")
    func chunkedWhileRecording() async throws {
        let cassette = try Fixtures.temporaryDirectory() + "/chunked.json"
        let size = 3 << 20
        let events = (0..<3).map { Array("data: tick \($0)\n\n".utf8) }
        let upstream = try await TestUpstream.start { request in
            request.path == "/ticks"
                ? .paced(headers: ["Content-Type": "text/event-stream"], chunks: events, gap: 0.6)
                : .generated(size: size, announcesLength: false)
        }
        let recorder = try KakapoProcess([
            "record", "--upstream", upstream.baseURL, "--cassette", cassette, "--timeout", "1", "--port", "0",
        ])
        let port = try await recorder.waitUntilListening()
        let (head, body) = await Self.download(
            port: port, request: "GET /file HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        #expect(head.lowercased().contains("transfer-encoding: chunked"), "\(head)")
        // Chunked framing: the size plus the chunk lines and the last chunk.
        #expect(body > size)
        // Three events 0.6 s apart: 1.8 s in all, more than --timeout 1, but never 1 s without a byte.
        let ticks = await EventStreamTests.readEvents(port: port, path: "/ticks", prefix: "data: tick", count: 3)
        #expect(ticks.arrivals.count == 3, "\(ticks.text)")
        recorder.send(SIGINT)
        #expect(try await recorder.waitForExit() == 0)
        await upstream.stop()

        let recorded = try CassetteFile.load(cassette).interactions
        #expect(recorded.map(\.request.target) == ["/file", "/ticks"])
        #expect(recorded.first?.response.body == (0..<size).map { UInt8(truncatingIfNeeded: $0) })
        #expect(recorded.last?.chunks?.count == 3)

        let replay = try KakapoProcess(["replay", "--cassette", cassette, "--port", "0"])
        let (replayedHead, replayedBody) = await Self.download(
            port: try await replay.waitUntilListening(),
            request: "GET /file HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        #expect(replayedHead.contains("Content-Length: \(size)"), "\(replayedHead)")
        #expect(replayedBody == size)
        replay.send(SIGINT)
        #expect(try await replay.waitForExit() == 0)
    }
}
