import Foundation
import Kakapo
import KakapoJSON
import KakapoTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Issue 25, the wire and the admin API: a client can neither reach the admin API through the proxy or
/// from a web page, nor hold descriptors, tunnels or memory, nor send a path or `Host` that misleads.
@Suite("Trust: the wire and the admin API")
struct TrustWireTests {
    /// A forward proxy (`--proxy`, every tunnel blind) that forwards what it is not answered for.
    static func forwardProxy(_ configure: (inout ProxyConfiguration) -> Void = { _ in }) async throws -> ProxyHarness {
        var configuration = ProxyConfiguration(mode: .passthrough)
        configuration.forwardProxy = ForwardProxyConfiguration()
        configure(&configuration)
        return try await ProxyHarness.start(configuration)
    }

    static func status(of answer: String) -> Int? {
        answer.split(separator: " ", maxSplits: 2).dropFirst().first.flatMap { Int($0) }
    }

    @Test("absolute-form requests to Kakapo's own address through the proxy are refused, not answered by the admin API")
    func absoluteFormToSelf() async throws {
        let proxy = try await Self.forwardProxy()
        let route = #"{"id": "planted", "path": "/planted", "response": {"body": "gotcha"}}"#
        for host in ["127.0.0.1", "localhost", "[::1]", "0.0.0.0"] {
            let connection = try RawConnection(port: proxy.port)
            connection.send(
                "POST http://\(host):\(proxy.port)/__kakapo/routes HTTP/1.1\r\nHost: \(host):\(proxy.port)\r\n"
                    + "Content-Type: application/json\r\nContent-Length: \(route.utf8.count)\r\n\r\n\(route)")
            let answer = connection.receive()
            #expect(Self.status(of: answer.text) == 403, "\(host): \(answer.text.prefix(300))")
            #expect(answer.text.contains("Kakapo itself"))
        }
        let read = try RawConnection(port: proxy.port)
        read.send(
            "GET http://127.0.0.1:\(proxy.port)/__kakapo/routes HTTP/1.1\r\nHost: 127.0.0.1:\(proxy.port)\r\n\r\n")
        #expect(Self.status(of: read.receive().text) == 403)
        // Nothing was planted, and the admin API itself still answers a direct loopback client.
        let routes = try await proxy.client.send(.get, "/__kakapo/routes")
        #expect(routes.status == 200)
        #expect(!routes.text.contains("planted"))
        await proxy.stop()
    }

    @Test("a CONNECT tunnel to Kakapo's own port is refused with 403")
    func connectToSelf() async throws {
        let proxy = try await Self.forwardProxy()
        for target in ["127.0.0.1:\(proxy.port)", "localhost:\(proxy.port)", "127.0.0.2:\(proxy.port)"] {
            let connection = try RawConnection(port: proxy.port)
            connection.send(
                "CONNECT \(target) HTTP/1.1\r\nHost: \(target)\r\n\r\n"
                    + "GET /__kakapo/routes HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            let answer = connection.receive()
            #expect(Self.status(of: answer.text) == 403, "\(target): \(answer.text.prefix(300))")
            #expect(!answer.text.contains("\"routes\""))
            #expect(answer.closed)
        }
        await proxy.stop()
    }

    /// A name other than localhost that /etc/hosts points at loopback (`vm`, the machine's own name), if any.
    static var loopbackAlias: String? {
        guard let hosts = try? String(contentsOfFile: "/etc/hosts", encoding: .utf8) else { return nil }
        for line in hosts.split(separator: "\n") where line.hasPrefix("127.") {
            let names = line.split(whereSeparator: { $0 == " " || $0 == "\t" }).dropFirst()
            if let name = names.first(where: { !$0.hasPrefix("#") && !$0.lowercased().contains("localhost") }) {
                return String(name)
            }
        }
        return nil
    }

    @Test(
        "a host name that resolves to loopback does not lead through the proxy to the admin API either",
        .enabled(if: TrustWireTests.loopbackAlias != nil, "no name other than localhost points at loopback here"))
    func loopbackAliasThroughTheProxy() async throws {
        let alias = try #require(Self.loopbackAlias)
        let proxy = try await Self.forwardProxy()
        let route = #"{"id": "alias", "path": "/alias", "response": {}}"#
        // Forwarded, the request comes back with `Host: alias:port`, which the admin API does not take.
        let absolute = try RawConnection(port: proxy.port)
        absolute.send(
            "POST http://\(alias):\(proxy.port)/__kakapo/routes HTTP/1.1\r\nHost: \(alias):\(proxy.port)\r\n"
                + "Content-Type: application/json\r\nContent-Length: \(route.utf8.count)\r\n\r\n\(route)")
        let answer = absolute.receive { $0.contains("}") }
        #expect(Self.status(of: answer.text) == 403, "\(answer.text.prefix(300))")
        // A tunnel is refused once connected, when its peer turns out to be Kakapo's own address.
        let tunnel = try RawConnection(port: proxy.port)
        tunnel.send("CONNECT \(alias):\(proxy.port) HTTP/1.1\r\nHost: \(alias):\(proxy.port)\r\n\r\n")
        let refused = tunnel.receive()
        #expect(Self.status(of: refused.text) == 403, "\(refused.text.prefix(300))")
        #expect(refused.text.contains("Kakapo itself"))
        #expect(!(try await proxy.client.send(.get, "/__kakapo/routes").text.contains("alias")))
        await proxy.stop()
    }

    // MARK: Browsers

    static func adminServer(token: String? = nil) async throws -> ProxyHarness {
        var configuration = ProxyConfiguration(mode: .none)
        configuration.adminToken = token
        return try await ProxyHarness.start(configuration)
    }

    static func send(_ port: Int, _ head: String, body: String = "") -> String {
        guard let connection = try? RawConnection(port: port) else { return "" }
        connection.send(head + "Content-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n" + body)
        return connection.receive().text
    }

    @Test("a web page cannot change the admin API: text/plain and form bodies and foreign Origins get 403")
    func crossSiteRequests() async throws {
        let proxy = try await Self.adminServer()
        let port = proxy.port
        let route = #"{"id": "csrf", "path": "/csrf", "response": {}}"#
        let plain = Self.send(
            port, "POST /__kakapo/routes HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nContent-Type: text/plain\r\n",
            body: route)
        #expect(Self.status(of: plain) == 403, "\(plain)")
        #expect(plain.contains("JSON body"))
        let form = Self.send(
            port,
            "POST /__kakapo/routes HTTP/1.1\r\nHost: localhost:\(port)\r\n"
                + "Content-Type: application/x-www-form-urlencoded\r\n", body: route)
        #expect(Self.status(of: form) == 403)
        let noType = Self.send(port, "POST /__kakapo/routes HTTP/1.1\r\nHost: localhost:\(port)\r\n", body: route)
        #expect(Self.status(of: noType) == 403)
        let foreign = Self.send(
            port,
            "POST /__kakapo/routes HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nContent-Type: application/json\r\n"
                + "Origin: http://evil.example\r\n", body: route)
        #expect(Self.status(of: foreign) == 403)
        #expect(foreign.contains("Origin"))
        let clear = Self.send(
            port, "DELETE /__kakapo/requests HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nOrigin: null\r\n")
        #expect(Self.status(of: clear) == 403)
        #expect(!(try await proxy.client.send(.get, "/__kakapo/routes").text.contains("csrf")))

        // Kakapo's own tools and pages still work: JSON, its own Origin, a DELETE without a body.
        let own = Self.send(
            port,
            "POST /__kakapo/routes HTTP/1.1\r\nHost: localhost:\(port)\r\nContent-Type: application/json; charset=utf-8\r\n"
                + "Origin: http://localhost:\(port)\r\n", body: route)
        #expect(Self.status(of: own) == 201, "\(own)")
        let delete = Self.send(port, "DELETE /__kakapo/routes HTTP/1.1\r\nHost: [::1]:\(port)\r\n")
        #expect(Self.status(of: delete) == 200, "\(delete)")
        await proxy.stop()
    }

    @Test("a DNS-rebinding Host is refused by every admin endpoint unless the admin token is given")
    func rebindingHost() async throws {
        let proxy = try await Self.adminServer()
        let port = proxy.port
        let journal = Self.send(port, "GET /__kakapo/requests HTTP/1.1\r\nHost: attacker.example:\(port)\r\n")
        #expect(Self.status(of: journal) == 403, "\(journal)")
        #expect(journal.contains("DNS rebinding"))
        for host in ["127.0.0.1:\(port)", "localhost", "127.1.2.3:\(port)", "[::1]:\(port)"] {
            let fine = Self.send(port, "GET /__kakapo/health HTTP/1.1\r\nHost: \(host)\r\n")
            #expect(Self.status(of: fine) == 200, "\(host): \(fine)")
        }
        await proxy.stop()

        let guarded = try await Self.adminServer(token: "t0ken")
        let withToken = Self.send(
            guarded.port,
            "POST /__kakapo/routes HTTP/1.1\r\nHost: kakapo.internal\r\nAuthorization: Bearer t0ken\r\n"
                + "Content-Type: text/plain\r\n", body: #"{"path": "/a", "response": {}}"#)
        #expect(Self.status(of: withToken) == 201, "\(withToken)")
        let without = Self.send(guarded.port, "GET /__kakapo/requests HTTP/1.1\r\nHost: kakapo.internal\r\n")
        #expect(Self.status(of: without) == 403 || Self.status(of: without) == 401)
        await guarded.stop()
    }

    // MARK: Hosts and paths

    @Test("an HTTP/1.1 request without Host or with two is answered 400; HTTP/1.0 without Host is fine")
    func hostHeaders() async throws {
        let proxy = try await HostileInputTests.demoProxy()
        let missing = try RawConnection(port: proxy.port)
        missing.send("GET /users/1 HTTP/1.1\r\n\r\n")
        let missingAnswer = missing.receive()
        #expect(missingAnswer.text.hasPrefix("HTTP/1.1 400"), "\(missingAnswer.text.prefix(200))")
        #expect(missingAnswer.text.contains("Host"))
        let two = try RawConnection(port: proxy.port)
        two.send("GET /users/1 HTTP/1.1\r\nHost: a.example\r\nHost: b.example\r\n\r\n")
        #expect(two.receive().text.hasPrefix("HTTP/1.1 400"))
        let old = try RawConnection(port: proxy.port)
        old.send("GET /users/1 HTTP/1.0\r\n\r\n")
        let oldAnswer = old.receive()
        #expect(oldAnswer.text.hasPrefix("HTTP/1.0 200"), "\(oldAnswer.text.prefix(200))")
        try await HostileInputTests.stillServing(proxy)
        await proxy.stop()
    }

    @Test("dot-segments that climb out of the upstream's path prefix are refused and never reach the upstream")
    func pathsClimbingOutOfThePrefix() async throws {
        let upstream = try await TestUpstream.start { request in
            .response(HTTP.Response(status: 200, contentType: "text/plain", text: request.path))
        }
        let proxy = try await ProxyHarness.start(
            ProxyConfiguration(
                mode: .passthrough, upstream: UpstreamConfiguration(baseURL: upstream.baseURL + "/api/v1")))
        for target in ["/../../x", "/%2e%2e/%2E%2e/x", "/a/../../x", "/.%2e/x", "/..%2fx", "/..\\x", "/../x?y=1"] {
            let connection = try RawConnection(port: proxy.port)
            connection.send("GET \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            let answer = connection.receive()
            #expect(answer.text.hasPrefix("HTTP/1.1 400"), "\(target): \(answer.text.prefix(200))")
            #expect(answer.text.contains("climbs out"))
        }
        #expect(upstream.received.isEmpty, "\(upstream.received.map(\.target))")
        let inside = try RawConnection(port: proxy.port)
        inside.send("GET /a/./b/../c HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        #expect(inside.receive().text.hasPrefix("HTTP/1.1 200"))
        #expect(upstream.received.count == 1)
        await proxy.stop()
        await upstream.stop()
    }

    // MARK: Tunnels

    @Test("an idle blind tunnel is closed after the idle timeout, an active one is not")
    func idleBlindTunnel() async throws {
        let target = try await TestUpstream.start { _ in
            .response(HTTP.Response(status: 200, contentType: "text/plain", text: "through"))
        }
        let proxy = try await Self.forwardProxy { $0.idleTimeout = 0.8 }
        let connection = try RawConnection(port: proxy.port, timeout: 5)
        connection.send("CONNECT 127.0.0.1:\(target.port) HTTP/1.1\r\nHost: 127.0.0.1:\(target.port)\r\n\r\n")
        #expect(connection.receiveHead().head.hasPrefix("HTTP/1.1 200"))
        // Traffic in the tunnel for longer than the idle timeout keeps it open.
        // Gaps timed on this thread: a sleeping task may wake late when other tests hold the pool.
        for _ in 0..<5 {
            usleep(250_000)
            connection.send("GET /x HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            #expect(connection.receive { $0.hasSuffix("through") }.text.hasSuffix("through"))
        }
        let started = ContinuousClock.now
        let quiet = connection.receive()
        #expect(quiet.closed, "the quiet tunnel stayed open")
        #expect(ContinuousClock.now - started < .seconds(3))
        await proxy.stop()
        await target.stop()
    }

    // MARK: Memory

    @Test("request bodies held at once share one budget: past it 503 with Retry-After, and every byte comes back")
    func bodyBudget() async throws {
        var configuration = ProxyConfiguration(mode: .none)
        configuration.maximumBufferedBodyBytes = 1 << 20
        configuration.port = 0
        let server = try ProxyServer(configuration: configuration)
        server.router.post("/slow") { request in
            try await Task.sleep(for: .milliseconds(800))
            return ["got": request.body.count]
        }
        // The first upload is held (its body in memory) until the test lets it go, so the two that arrive
        // meanwhile are refused whatever the scheduling: three racing uploads could all cross the limit
        // at once and all be refused.
        let (entered, enteredSignal) = AsyncStream<Void>.makeStream()
        let (release, releaseSignal) = AsyncStream<Void>.makeStream()
        server.router.post("/held") { request in
            enteredSignal.yield()
            for await _ in release { break }
            return ["got": request.body.count]
        }
        let port = try await server.start()
        let client = try TestClient(port: port)
        let body = [UInt8](repeating: 0x61, count: 600_000)
        let held = Task { try await client.send(.post, "/held", body: body) }
        for await _ in entered { break }
        let refused = try await withThrowingTaskGroup(of: (Int, String?).self) { group in
            for _ in 0..<2 {
                group.addTask {
                    let answer = try await client.send(.post, "/slow", body: body)
                    return (answer.status, answer.headers["Retry-After"])
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(refused.allSatisfy { $0 == (503, "1") }, "\(refused)")
        releaseSignal.yield()
        let first = try await held.value
        #expect(first.status == 200)
        #expect(first.text.contains("600000"), "\(first.text)")
        // A client that leaves in the middle of its body gives its share back.
        let leaving = try RawConnection(port: port)
        leaving.send(
            "POST /slow HTTP/1.1\r\nHost: x\r\nContent-Length: 900000\r\n\r\n" + String(repeating: "a", count: 600_000))
        try await Task.sleep(for: .milliseconds(200))
        leaving.closeNow()
        // So does a chunked body refused part way.
        let chunked = try RawConnection(port: port)
        let chunk = String(repeating: "b", count: 400_000)
        let piece = String(chunk.utf8.count, radix: 16) + "\r\n" + chunk + "\r\n"
        chunked.send("POST /slow HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n" + piece + piece + piece)
        #expect(chunked.receive().text.hasPrefix("HTTP/1.1 503"))
        // Every byte comes back: 900000 of 1 MiB fits only when nothing is held. The server sees the
        // leaving client's close when the machine gets to it, so the first may still be refused; the
        // bound only guards against a budget that never comes back.
        let deadline = ContinuousClock.now + .seconds(20)
        var status = 0
        while ContinuousClock.now < deadline {
            status = try await client.send(.post, "/slow", body: [UInt8](repeating: 0x62, count: 900_000)).status
            if status == 200 { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(status == 200)
        #expect(try await client.send(.post, "/slow", body: [UInt8](repeating: 0x62, count: 900_000)).status == 200)
        client.shutdown()
        await server.shutdown()
    }

    // MARK: Descriptors

    /// User and system CPU time of a process so far, in clock ticks, from /proc.
    static func cpuTicks(of pid: String) -> Int? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return nil }
        // After the command name: state is field 3, utime 14 and stime 15.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 12, let user = Int(fields[11]), let system = Int(fields[12]) else { return nil }
        return user + system
    }

    @Test("out of descriptors, the server waits instead of spinning on accept, and answers again once they free up")
    func descriptorExhaustion() async throws {
        // The built binary with a small descriptor limit: lowering it in the test process would hurt
        // every other test.
        let kakapo = try KakapoProcess(
            [
                "-c", #"echo "$$"; ulimit -n 48; exec "$0" replay --cassette "$1" --port 0"#, KakapoProcess.binary,
                ReadmeExampleTests.demoCassette,
            ], executable: "/bin/bash")
        let port = try await kakapo.waitUntilListening()
        let pid = try #require(kakapo.standardOutput.split(separator: "\n").first.map(String.init))
        var held: [RawConnection] = []
        for _ in 0..<80 {
            let connection = try RawConnection(port: port, timeout: 5)
            connection.send("GET /users/1 HTTP/1.1\r\nHost: x\r\n\r\n")
            held.append(connection)
        }
        try await Task.sleep(for: .milliseconds(500))
        let before = try #require(Self.cpuTicks(of: pid))
        try await Task.sleep(for: .seconds(2))
        let spent = try #require(Self.cpuTicks(of: pid)) - before
        // 2 s of a spinning accept loop is about 200 ticks (100 a second); waiting costs next to none.
        #expect(spent < 40, "\(spent) clock ticks of CPU in 2 s at the descriptor limit")
        for connection in held { connection.closeNow() }
        held.removeAll()
        try await Task.sleep(for: .milliseconds(300))
        let fresh = try RawConnection(port: port, timeout: 10)
        fresh.send("GET /users/1 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        #expect(fresh.receive().text.hasPrefix("HTTP/1.1 200"))
        kakapo.send(SIGTERM)
        #expect(try await kakapo.waitForExit() == 0)
    }

    #if os(Linux)
        /// The descriptor flags (`FD_CLOEXEC`) of this process's listening sockets on `port`.
        static func listeningSocketFlags(port: Int) throws -> [Int32] {
            var flags: [Int32] = []
            for name in try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") {
                guard let descriptor = Int32(name) else { continue }
                var listening: Int32 = 0
                var size = socklen_t(MemoryLayout<Int32>.size)
                guard getsockopt(descriptor, SOL_SOCKET, SO_ACCEPTCONN, &listening, &size) == 0, listening != 0 else {
                    continue
                }
                var address = sockaddr_storage()
                var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
                let named = withUnsafeMutablePointer(to: &address) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
                }
                guard named == 0 else { continue }
                // sin_port and sin6_port sit at the same offset, in network order.
                let bound = withUnsafeBytes(of: &address) { Int(UInt16($0[2]) << 8 | UInt16($0[3])) }
                if bound == port { flags.append(fcntl(descriptor, F_GETFD)) }
            }
            return flags
        }

        @Test("the listening socket is close-on-exec, so no process Kakapo starts holds the port")
        func listeningSocketClosesOnExec() async throws {
            let proxy = try await HostileInputTests.demoProxy()
            let flags = try Self.listeningSocketFlags(port: proxy.port)
            #expect(flags.count == 1)
            #expect(flags.allSatisfy { $0 >= 0 && $0 & FD_CLOEXEC != 0 }, "descriptor flags \(flags)")
            try await HostileInputTests.stillServing(proxy)
            await proxy.stop()
        }
    #endif
}
