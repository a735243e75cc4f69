import Foundation
import Kakapo
import KakapoTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Issue 25, "Bounds": clients that stall cannot hold back other clients' transfers, and hostile
/// answers cannot grow Kakapo without bound or break a cassette.
@Suite("Trust: bounds")
struct TrustBoundsTests {
    /// An upstream with a large streamed answer at `/big`, a chunked upload sink at `/upload` and a small
    /// answer everywhere else.
    static func upstream() async throws -> TestUpstream {
        try await TestUpstream.start { request in
            switch request.target {
            case "/big": return .generated(size: 256 << 20, announcesLength: false)
            default: return .response(HTTP.Response(status: 200, headers: [:], body: Array("small".utf8)))
            }
        }
    }

    /// A passthrough proxy in front of `upstream` with the command line's default of 32 transfers at once.
    static func passthrough(_ upstream: TestUpstream, timeout: Double = 60) async throws -> ProxyHarness {
        var configuration = UpstreamConfiguration(baseURL: upstream.baseURL, timeout: timeout)
        configuration.maximumConcurrentRequests = 32
        return try await ProxyHarness.start(ProxyConfiguration(mode: .passthrough, upstream: configuration))
    }

    /// How long an ordinary request through `proxy` takes to be answered "small" (nil: not within 30 s). Held
    /// back, it would wait for ever (every transfer slot taken); the bound the tests put on it (20 s) only
    /// tells that from a loaded machine's delay, the latency itself is the soak benchmark's to measure.
    static func ordinaryRequest(_ proxy: ProxyHarness) -> Duration? {
        let started = ContinuousClock.now
        guard let connection = try? RawConnection(port: proxy.port, timeout: 30) else { return nil }
        connection.send("GET /small HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        let answer = connection.receive { $0.hasSuffix("small") }
        return answer.text.hasSuffix("small") ? ContinuousClock.now - started : nil
    }

    @Test("40 clients that never read a streamed answer do not hold back another client's request")
    func stalledReaders() async throws {
        let upstream = try await Self.upstream()
        let proxy = try await Self.passthrough(upstream)
        var stalled: [RawConnection] = []
        for _ in 0..<40 {
            let connection = try RawConnection(port: proxy.port)
            connection.send("GET /big HTTP/1.1\r\nHost: x\r\n\r\n")
            stalled.append(connection)
        }
        // Every stalled transfer has started and filled its client's socket and window.
        try await Task.sleep(for: .seconds(2))
        let elapsed = Self.ordinaryRequest(proxy)
        #expect(elapsed != nil && elapsed! < .seconds(20), "answered after \(String(describing: elapsed))")
        for connection in stalled { connection.closeNow() }
        await proxy.stop()
        await upstream.stop()
    }

    @Test("40 chunked uploads that stop sending do not hold back another client's request")
    func stalledUploads() async throws {
        let upstream = try await Self.upstream()
        let proxy = try await Self.passthrough(upstream)
        var stalled: [RawConnection] = []
        for _ in 0..<40 {
            let connection = try RawConnection(port: proxy.port)
            connection.send("POST /upload HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n")
            stalled.append(connection)
        }
        try await Task.sleep(for: .seconds(1))
        let elapsed = Self.ordinaryRequest(proxy)
        #expect(elapsed != nil && elapsed! < .seconds(20), "answered after \(String(describing: elapsed))")
        // The uploads end and are answered before their connections close: a debug build of NIO asserts
        // when a connection closes mid-request while an answer to it is on its way.
        for connection in stalled { connection.send("0\r\n\r\n") }
        for connection in stalled { #expect(connection.receive { $0.hasSuffix("small") }.text.hasSuffix("small")) }
        await proxy.stop()
        await upstream.stop()
    }

    #if os(Linux)
        /// How many established TCP connections go to `port` on this machine (from /proc/net/tcp).
        static func connections(to port: Int) throws -> Int {
            // Read to the end: /proc files announce a size of 0.
            let file = open("/proc/net/tcp", O_RDONLY)
            guard file >= 0 else { throw POSIXError(.ENOENT) }
            defer { close(file) }
            var bytes: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 65536)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(file, $0.baseAddress, $0.count) }
                if count <= 0 { break }
                bytes += buffer[0..<count]
            }
            let table = String(decoding: bytes, as: UTF8.self)
            let hex = String(port, radix: 16, uppercase: true)
            let suffix = ":" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
            return table.split(separator: "\n").dropFirst().count { line in
                let fields = line.split(separator: " ")
                return fields.count > 3 && fields[2].hasSuffix(suffix) && fields[3] == "01"
            }
        }

        /// An upstream that answers how many body bytes it got: `got N`.
        static func countingUpstream() async throws -> TestUpstream {
            try await TestUpstream.start { request in
                .response(HTTP.Response(status: 200, headers: [:], body: Array("got \(request.body.count)".utf8)))
            }
        }

        @Test("40 uploads that stop before their first MiB open no upstream connection; finished, each goes up whole")
        func stalledUploadsStayHere() async throws {
            let upstream = try await Self.countingUpstream()
            let proxy = try await Self.passthrough(upstream)
            var stalled: [RawConnection] = []
            for index in 0..<40 {
                let connection = try RawConnection(port: proxy.port)
                // Chunked and announced (over 1 MiB, so it may stream) alike.
                if index.isMultiple(of: 2) {
                    connection.send(
                        "POST /upload HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3e8\r\n"
                            + String(repeating: "u", count: 1000) + "\r\n")
                } else {
                    connection.send(
                        "POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 2000000\r\n\r\n"
                            + String(repeating: "u", count: 1000))
                }
                stalled.append(connection)
            }
            try await Task.sleep(for: .seconds(1))
            // Before: each stalled upload held a connection to the upstream (and a request its server waited on).
            #expect(try Self.connections(to: upstream.port) == 0)
            let ordinary = try RawConnection(port: proxy.port, timeout: 30)
            ordinary.send("GET /small HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            #expect(ordinary.receive { $0.hasSuffix("got 0") }.text.hasSuffix("got 0"))
            // The chunked ones end: each goes upstream with its whole body.
            for connection in stalled.indices.filter({ $0.isMultiple(of: 2) }).map({ stalled[$0] }) {
                connection.send("0\r\n\r\n")
                #expect(connection.receive { $0.hasSuffix("got 1000") }.text.hasSuffix("got 1000"))
            }
            for connection in stalled { connection.closeNow() }
            await proxy.stop()
            await upstream.stop()
        }

        @Test("an upload past its first MiB goes upstream before it ends, and arrives whole")
        func largeUploadStreams() async throws {
            let upstream = try await Self.countingUpstream()
            let proxy = try await Self.passthrough(upstream)
            let uploader = try RawConnection(port: proxy.port, timeout: 30)
            let size = 3 << 20
            let first = String(repeating: "a", count: (1 << 20) + 4096)
            uploader.send("POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: \(size)\r\n\r\n" + first)
            // The upstream is asked while the client is still sending (polled: a loaded machine is slow).
            let deadline = ContinuousClock.now + .seconds(20)
            while try Self.connections(to: upstream.port) == 0 && ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(20))
            }
            #expect(try Self.connections(to: upstream.port) == 1)
            uploader.send(String(repeating: "b", count: size - first.utf8.count))
            #expect(uploader.receive { $0.hasSuffix("got \(size)") }.text.hasSuffix("got \(size)"))
            await proxy.stop()
            await upstream.stop()
        }

        @Test("a Connect streaming call's first message goes upstream at once: its server may answer before the next")
        func connectStreamGoesAtOnce() async throws {
            let upstream = try await Self.countingUpstream()
            let proxy = try await Self.passthrough(upstream)
            let caller = try RawConnection(port: proxy.port, timeout: 30)
            // One 5-byte envelope and 2 bytes of JSON, then nothing until the upstream has been asked.
            let message = "\u{0}\u{0}\u{0}\u{0}\u{2}{}"
            caller.send(
                "POST /chat.v1.Chat/Talk HTTP/1.1\r\nHost: x\r\nContent-Type: application/connect+json\r\n"
                    + "Transfer-Encoding: chunked\r\n\r\n7\r\n" + message + "\r\n")
            let deadline = ContinuousClock.now + .seconds(20)
            while try Self.connections(to: upstream.port) == 0 && ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(20))
            }
            #expect(try Self.connections(to: upstream.port) == 1, "the call waited here for more of its body")
            caller.send("0\r\n\r\n")
            #expect(caller.receive { $0.hasSuffix("got 7") }.text.hasSuffix("got 7"))
            await proxy.stop()
            await upstream.stop()
        }

        @Test("stalled clients keep at most four times --upstream-concurrency upstream connections")
        func stalledReadersAreBounded() async throws {
            let upstream = try await Self.upstream()
            var configuration = UpstreamConfiguration(baseURL: upstream.baseURL)
            configuration.maximumConcurrentRequests = 2
            let proxy = try await ProxyHarness.start(ProxyConfiguration(mode: .passthrough, upstream: configuration))
            var stalled: [RawConnection] = []
            for _ in 0..<20 {
                let connection = try RawConnection(port: proxy.port)
                connection.send("GET /big HTTP/1.1\r\nHost: x\r\n\r\n")
                stalled.append(connection)
                try await Task.sleep(for: .milliseconds(50))
            }
            try await Task.sleep(for: .seconds(1))
            let open = try Self.connections(to: upstream.port)
            #expect(open <= 4 * min(max(1, ProcessInfo.processInfo.activeProcessorCount), 8), "\(open) connections")
            let elapsed = Self.ordinaryRequest(proxy)
            #expect(elapsed != nil && elapsed! < .seconds(20), "answered after \(String(describing: elapsed))")
            for connection in stalled { connection.closeNow() }
            await proxy.stop()
            await upstream.stop()
        }
    #endif

    @Test("a client that never reads is cut off after --timeout, and one that stops uploading gets 504")
    func stalledClientsTimeOut() async throws {
        let upstream = try await Self.upstream()
        let proxy = try await Self.passthrough(upstream, timeout: 1)
        let reader = try RawConnection(port: proxy.port, timeout: 10)
        reader.send("GET /big HTTP/1.1\r\nHost: x\r\n\r\n")
        let uploader = try RawConnection(port: proxy.port, timeout: 10)
        // Past the first MiB, which is read here before anything goes upstream: the upload is a transfer.
        let chunk = String(repeating: "u", count: (1 << 20) + 1024)
        uploader.send(
            "POST /upload HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                + String(chunk.utf8.count, radix: 16) + "\r\n" + chunk + "\r\n")
        try await Task.sleep(for: .seconds(3))
        // The stalled transfer was abandoned and its connection closed: what the socket held, then the end,
        // far short of the whole answer.
        let started = ContinuousClock.now
        let received = reader.drain(upTo: 256 << 20)
        #expect(received < 64 << 20, "received \(received) bytes")
        #expect(ContinuousClock.now - started < .seconds(5))
        let answer = uploader.receive { $0.contains("\r\n\r\n") && $0.hasSuffix("}\n") }
        #expect(answer.text.hasPrefix("HTTP/1.1 504"), "\(answer.text.prefix(300))")
        #expect(answer.text.contains("sent nothing more of its body"), "\(answer.text)")
        // The request ends before the connection does: a debug build of NIO asserts when a connection
        // closes mid-request after its answer went out.
        uploader.send("0\r\n\r\n")
        await proxy.stop()
        await upstream.stop()
    }

    @Test("a gzip answer that expands past 16 MiB is recorded as sent, not decoded, and replays byte for byte")
    func gzipBomb() async throws {
        // 24 MiB of zeros compress to about 24 KB.
        let bomb = ContentCoding.gzip.encode([UInt8](repeating: 0, count: 24 << 20))
        let upstream = try await TestUpstream.start { _ in
            .response(
                HTTP.Response(
                    status: 200, headers: ["Content-Type": "application/json", "Content-Encoding": "gzip"], body: bomb))
        }
        let cassette = try Fixtures.temporaryDirectory() + "/bomb.json"
        let recorder = try await ProxyHarness.recording(upstream, cassette: cassette)
        #expect(try await recorder.client.send(.get, "/bomb").body == bomb)
        await recorder.stop()
        await upstream.stop()
        let size = try #require(try FileManager.default.attributesOfItem(atPath: cassette)[.size] as? Int)
        #expect(size < 256 << 10, "the cassette has \(size) bytes")
        let text = try String(contentsOfFile: cassette, encoding: .utf8)
        #expect(text.contains("\"undecoded\""))

        let player = try await ProxyHarness.replaying(cassette)
        let replayed = try await player.client.send(.get, "/bomb")
        #expect(replayed.body == bomb)
        #expect(replayed.headers["Content-Encoding"] == "gzip")
        await player.stop()
    }

    @Test("misses on a 30,000-interaction cassette do not hold back hits")
    func missesOnALargeCassette() async throws {
        let count = 30_000
        let cassette = try Fixtures.temporaryDirectory() + "/large.json"
        try CassetteFile.save(
            Cassette(
                interactions: (0..<count).map { index in
                    Interaction(
                        request: HTTP.Request(method: .get, target: "/items/\(index)?page=\(index % 7)"),
                        response: HTTP.Response(status: 200, headers: [:], body: Array("item \(index)".utf8)),
                        recordedAt: "", durationMilliseconds: 0)
                }), to: cassette)
        let proxy = try await ProxyHarness.replaying(cassette)
        // Four clients that only miss, on threads of their own (they block), until the hits below are done.
        let port = proxy.port
        let missing = MissingClients()
        for client in 0..<4 {
            Thread {
                var answered = 0
                while missing.running {
                    guard let connection = try? RawConnection(port: port, timeout: 30) else { break }
                    connection.send(
                        "GET /nothing/\(client)/\(answered) HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                    if connection.receive().text.hasPrefix("HTTP/1.1 404") { missing.answered() }
                    answered += 1
                }
                missing.done()
            }.start()
        }
        try await Task.sleep(for: .milliseconds(300))
        var durations: [Duration] = []
        for index in 0..<20 {
            let started = ContinuousClock.now
            let connection = try RawConnection(port: proxy.port, timeout: 30)
            connection.send(
                "GET /items/\(index * 1000)?page=\(index * 1000 % 7) HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            let answer = connection.receive()
            durations.append(ContinuousClock.now - started)
            #expect(answer.text.hasSuffix("item \(index * 1000)"))
        }
        let answeredMisses = missing.stop(waitingFor: 4)
        durations.sort()
        #expect(durations[durations.count / 2] < .milliseconds(300), "hits took \(durations)")
        #expect(answeredMisses > 0)
        await proxy.stop()
    }

    @Test("an upstream header with a bare CR is answered 502 naming the header, and nothing is recorded")
    func bareCarriageReturn() async throws {
        let upstream = try RawUpstream(
            answer: "HTTP/1.1 200 OK\r\nX-A: a\rb\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\nok")
        let cassette = try Fixtures.temporaryDirectory() + "/cr.json"
        let proxy = try await ProxyHarness.start(
            ProxyConfiguration(
                mode: .new, cassettePath: cassette, upstream: UpstreamConfiguration(baseURL: upstream.baseURL)))
        let connection = try RawConnection(port: proxy.port, timeout: 10)
        connection.send("GET /cr HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        let answer = connection.receive()
        #expect(answer.text.hasPrefix("HTTP/1.1 502"), "\(answer.text)")
        #expect(answer.text.contains("X-A"), "\(answer.text)")
        #expect(answer.text.contains("bare carriage return"), "\(answer.text)")
        let summary = await proxy.stop()
        #expect(summary.recorded == 0)
        // Whatever is on disk loads.
        if FileManager.default.fileExists(atPath: cassette) {
            #expect(try CassetteFile.load(cassette).interactions.isEmpty)
        }
        upstream.stop()
    }
}

/// What clients that only miss share with the test: whether to go on, and how many misses were answered.
final class MissingClients: @unchecked Sendable {
    // @unchecked Sendable: every stored var is read and written only with `condition` locked.
    private let condition = NSCondition()
    private var stopped = false
    private var count = 0
    private var finished = 0

    var running: Bool {
        condition.lock()
        defer { condition.unlock() }
        return !stopped
    }

    func answered() {
        condition.lock()
        count += 1
        condition.unlock()
    }

    func done() {
        condition.lock()
        finished += 1
        condition.broadcast()
        condition.unlock()
    }

    /// Tells the clients to stop, waits until `clients` have, and returns how many misses were answered.
    func stop(waitingFor clients: Int) -> Int {
        condition.lock()
        defer { condition.unlock() }
        stopped = true
        while finished < clients { condition.wait() }
        return count
    }
}

/// A TCP server on 127.0.0.1 that answers every connection with the same bytes, whatever they are, once
/// it has read a request head: for answers no HTTP server library would send.
final class RawUpstream: @unchecked Sendable {
    // @unchecked Sendable: `listener` and `answer` never change after init; the accept thread owns the
    // rest.
    private let listener: Int32
    private let answer: [UInt8]
    let port: Int

    init(answer: String) throws {
        self.answer = Array(answer.utf8)
        (listener, port) = try LoopbackSocket.bound(listening: 16)
        let thread = Thread { [self] in serve() }
        thread.start()
    }

    /// Stops accepting: the accept thread ends.
    func stop() {
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }

    var baseURL: String { "http://127.0.0.1:\(port)" }

    private func serve() {
        while true {
            let client = accept(listener, nil, nil)
            if client < 0 { return }
            var received: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 4096)
            while received.firstRange(of: Array("\r\n\r\n".utf8)) == nil {
                let count = buffer.withUnsafeMutableBytes { recv(client, $0.baseAddress, $0.count, 0) }
                if count <= 0 { break }
                received += buffer[0..<count]
            }
            _ = answer.withUnsafeBytes { send(client, $0.baseAddress, $0.count, 0) }
            close(client)
        }
    }
}
