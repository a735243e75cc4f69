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
        // Nor to the admin listener's port, which is Kakapo itself too.
        let admin = try #require(proxy.server.adminPort)
        for host in ["127.0.0.1", "localhost"] {
            let connection = try RawConnection(port: proxy.port)
            connection.send(
                "POST http://\(host):\(admin)/__kakapo/routes HTTP/1.1\r\nHost: \(host):\(admin)\r\n"
                    + "Content-Type: application/json\r\nContent-Length: \(route.utf8.count)\r\n\r\n\(route)")
            let answer = connection.receive()
            #expect(Self.status(of: answer.text) == 403, "admin \(host): \(answer.text.prefix(300))")
        }
        // Nothing was planted, and the admin API itself still answers a direct loopback client.
        let routes = try await proxy.client.send(.get, "/__kakapo/routes")
        #expect(routes.status == 200)
        #expect(!routes.text.contains("planted"))
        await proxy.stop()
    }

    @Test("a CONNECT tunnel to Kakapo's own port is refused with 403")
    func connectToSelf() async throws {
        let proxy = try await Self.forwardProxy()
        let admin = try #require(proxy.server.adminPort)
        for target in [
            "127.0.0.1:\(proxy.port)", "localhost:\(proxy.port)", "127.0.0.2:\(proxy.port)", "127.0.0.1:\(admin)",
            "localhost:\(admin)",
        ] {
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
        var configuration = ProxyConfiguration(mode: .replay)
        configuration.adminToken = token
        configuration.adminPort = 0
        return try await ProxyHarness.start(configuration)
    }

    static func send(_ port: Int, _ head: String, body: String = "") -> String {
        guard let connection = try? RawConnection(port: port) else { return "" }
        connection.send(head + "Content-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n" + body)
        return connection.receive().text
    }

    @Test("a web page cannot change the admin API: text/plain and form bodies and any Origin on the proxy port get 403")
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

        // The proxy port serves the app's pages, so even its own Origin is a page's request there.
        let ownOnProxy = Self.send(
            port,
            "POST /__kakapo/routes HTTP/1.1\r\nHost: localhost:\(port)\r\nContent-Type: application/json; charset=utf-8\r\n"
                + "Origin: http://localhost:\(port)\r\n", body: route)
        #expect(Self.status(of: ownOnProxy) == 403, "\(ownOnProxy)")
        #expect(ownOnProxy.contains("do not answer a web page's request"), "\(ownOnProxy)")
        // Kakapo's own tools still work there: JSON without a page's marks, a DELETE without a body.
        let tool = Self.send(
            port,
            "POST /__kakapo/routes HTTP/1.1\r\nHost: localhost:\(port)\r\nContent-Type: application/json; charset=utf-8\r\n",
            body: route)
        #expect(Self.status(of: tool) == 201, "\(tool)")
        let delete = Self.send(port, "DELETE /__kakapo/routes HTTP/1.1\r\nHost: [::1]:\(port)\r\n")
        #expect(Self.status(of: delete) == 200, "\(delete)")
        // The inspector's page, on the admin listener, may change things with its own Origin.
        let admin = try #require(proxy.server.adminPort)
        let own = Self.send(
            admin,
            "POST /__kakapo/routes HTTP/1.1\r\nHost: localhost:\(admin)\r\nContent-Type: application/json; charset=utf-8\r\n"
                + "Origin: http://localhost:\(admin)\r\n", body: route)
        #expect(Self.status(of: own) == 201, "\(own)")
        await proxy.stop()
    }

    /// The admin endpoints, each as a request line and a body.
    static let adminEndpoints: [(String, String)] = [
        ("GET /__kakapo/requests", ""), ("POST /__kakapo/requests/count", #"{"path": "/"}"#),
        ("DELETE /__kakapo/requests", ""), ("GET /__kakapo/requests/1", ""),
        ("POST /__kakapo/requests/1/save", "{}"), ("GET /__kakapo/store", ""), ("DELETE /__kakapo/store", ""),
        ("GET /__kakapo/routes", ""), ("POST /__kakapo/routes", #"{"path": "/x", "response": {}}"#),
        ("DELETE /__kakapo/routes", ""), ("GET /__kakapo/sessions", ""),
        ("POST /__kakapo/sessions", #"{"cassette": "x.json"}"#), ("GET /__kakapo/events", ""),
        ("GET /__kakapo/cassette", ""), ("GET /__kakapo/cassette/0", ""), ("GET /__kakapo/nothing", ""),
    ]

    @Test(
        "no page Kakapo serves shares an origin with the admin API: on the proxy port every admin endpoint but health refuses a page's request, the admin listener refuses other sites and serves nothing else"
    )
    func adminOrigin() async throws {
        var configuration = ProxyConfiguration(mode: .replay)
        configuration.adminPort = 0
        configuration.sessionDirectory = try Fixtures.temporaryDirectory()
        let proxy = try await ProxyHarness.start(configuration)
        let port = proxy.port
        let admin = try #require(proxy.server.adminPort)
        #expect(admin != port)
        // Same origin on the proxy port, by Origin or by Sec-Fetch-Site, whatever loopback spelling.
        let marks = [
            "Origin: http://127.0.0.1:\(port)", "Origin: http://localhost:\(port)", "Origin: null",
            "Sec-Fetch-Site: same-origin", "Sec-Fetch-Site: cross-site",
        ]
        for (line, body) in Self.adminEndpoints {
            for mark in marks {
                let answer = Self.send(
                    port,
                    "\(line) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nContent-Type: application/json\r\n\(mark)\r\n",
                    body: body)
                #expect(Self.status(of: answer) == 403, "\(line) with \(mark): \(answer.prefix(300))")
                #expect(answer.contains("admin listener on port \(admin)"), "\(line) with \(mark)")
            }
        }
        // Health answers anyone (it names the listeners), and the user typing a URL (Sec-Fetch-Site: none) is
        // no page.
        let health = Self.send(
            port, "GET /__kakapo/health HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nOrigin: http://127.0.0.1:\(port)\r\n")
        #expect(Self.status(of: health) == 200)
        let listeners =
            (try? JSONSerialization.jsonObject(with: Data(health.components(separatedBy: "\r\n\r\n").last!.utf8)))
            .flatMap { ($0 as? [String: Any])?["listeners"] as? [String: Int] }
        #expect(listeners == ["proxy": port, "admin": admin], "\(health)")
        let typed = Self.send(
            port, "GET /__kakapo/requests HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nSec-Fetch-Site: none\r\n")
        #expect(Self.status(of: typed) == 200, "\(typed.prefix(300))")
        // A page opened at the wildcard address sends no Fetch Metadata: its Host gives it away.
        for host in ["0.0.0.0:\(port)", "[::]:\(port)", "[::]"] {
            let wildcard = Self.send(port, "GET /__kakapo/requests HTTP/1.1\r\nHost: \(host)\r\n")
            #expect(Self.status(of: wildcard) == 403, "\(host): \(wildcard.prefix(300))")
        }
        // The inspector on the proxy port redirects to the admin listener, keeping the host named.
        let page = Self.send(
            port, "GET /__kakapo/ui?x=1 HTTP/1.1\r\nHost: localhost:\(port)\r\nSec-Fetch-Site: none\r\n")
        #expect(Self.status(of: page) == 307, "\(page.prefix(300))")
        #expect(page.contains("Location: http://localhost:\(admin)/__kakapo/ui?x=1"), "\(page.prefix(300))")

        // The admin listener: another site's request is refused (the proxy port's pages are same-site), but
        // its page's files are served to a navigation from anywhere.
        for mark in ["Origin: http://127.0.0.1:\(port)", "Origin: http://evil.example", "Sec-Fetch-Site: same-site"] {
            for (line, body) in Self.adminEndpoints {
                let answer = Self.send(
                    admin,
                    "\(line) HTTP/1.1\r\nHost: 127.0.0.1:\(admin)\r\nContent-Type: application/json\r\n\(mark)\r\n",
                    body: body)
                #expect(Self.status(of: answer) == 403, "admin listener \(line) with \(mark): \(answer.prefix(300))")
            }
        }
        let ui = Self.send(
            admin, "GET /__kakapo/ui HTTP/1.1\r\nHost: 127.0.0.1:\(admin)\r\nSec-Fetch-Site: same-site\r\n")
        #expect(Self.status(of: ui) == 200)
        let ownRead = Self.send(
            admin, "GET /__kakapo/requests HTTP/1.1\r\nHost: 127.0.0.1:\(admin)\r\nSec-Fetch-Site: same-origin\r\n")
        #expect(Self.status(of: ownRead) == 200, "\(ownRead.prefix(300))")
        // It serves no app content, nor forwards, nor tunnels.
        for line in ["GET /users/1", "GET http://127.0.0.1:\(port)/users/1", "OPTIONS /__kakapo/routes"] {
            let answer = Self.send(
                admin, "\(line) HTTP/1.1\r\nHost: 127.0.0.1:\(admin)\r\nOrigin: http://evil.example\r\n")
            #expect([400, 403, 404].contains(Self.status(of: answer)), "\(line): \(answer.prefix(300))")
            #expect(!answer.lowercased().contains("access-control-allow"), "\(line)")
        }
        let app = Self.send(admin, "GET /users/1 HTTP/1.1\r\nHost: 127.0.0.1:\(admin)\r\n")
        #expect(Self.status(of: app) == 404 && app.contains("admin listener"), "\(app.prefix(300))")
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

    @Test(
        "an HTTP/1.1 request without Host, with two, or with one that is not host[:port] is answered 400; HTTP/1.0 without Host is fine"
    )
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
        // One Host whose value is not one host[:port] (RFC 9112 3.2): a list, user info, a path, a blank.
        for value in ["a.test, b.test", "a.test,b.test", "user@a.test", "a.test/x", "a.test b.test", "a.test;x"] {
            let invalid = try RawConnection(port: proxy.port)
            invalid.send("GET /users/1 HTTP/1.1\r\nHost: \(value)\r\n\r\n")
            let answer = invalid.receive()
            #expect(answer.text.hasPrefix("HTTP/1.1 400"), "\(value): \(answer.text.prefix(200))")
            #expect(answer.text.contains("not one host[:port]"), "\(value)")
        }
        for value in ["127.0.0.1:\(proxy.port)", "[::1]:80", "localhost", "api.example_1.test:8080"] {
            let valid = try RawConnection(port: proxy.port)
            valid.send("GET /users/1 HTTP/1.1\r\nHost: \(value)\r\n\r\n")
            let answer = valid.receive()
            #expect(answer.text.hasPrefix("HTTP/1.1 200"), "\(value): \(answer.text.prefix(200))")
        }
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
        // `closed` is the idle timeout's doing: without a close the read gives up after 5 s and says open.
        let quiet = connection.receive()
        #expect(quiet.closed, "the quiet tunnel stayed open")
        await proxy.stop()
        await target.stop()
    }

    // MARK: Memory

    @Test("request bodies held at once share one budget: past it 503 with Retry-After, and every byte comes back")
    func bodyBudget() async throws {
        var configuration = ProxyConfiguration(mode: .replay)
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
