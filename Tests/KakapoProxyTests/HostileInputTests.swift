import Foundation
import Kakapo
import KakapoTestSupport
import Testing

/// Bad and unusual HTTP from clients: each gets a clear answer or a clean close, and the server keeps
/// serving others.
@Suite("Hostile input")
struct HostileInputTests {
    static func demoProxy(_ configure: (inout ProxyConfiguration) -> Void = { _ in }) async throws -> ProxyHarness {
        var configuration = ProxyConfiguration(mode: .replay, cassettePath: ReadmeExampleTests.demoCassette)
        configure(&configuration)
        return try await ProxyHarness.start(configuration)
    }

    static func stillServing(_ proxy: ProxyHarness) async throws {
        #expect(try await proxy.client.send(.get, "/users/1").status == 200)
    }

    @Test("a malformed request line gets 400 and the server keeps serving")
    func malformedRequest() async throws {
        let proxy = try await Self.demoProxy()
        let connection = try RawConnection(port: proxy.port)
        connection.send("THIS IS NOT HTTP\r\n\r\n")
        let answer = connection.receive()
        #expect(answer.text.hasPrefix("HTTP/1.1 400"))
        #expect(answer.text.contains("malformed HTTP request"))
        try await Self.stillServing(proxy)
        await proxy.stop()
    }

    @Test("an oversized header section gets 431 and the server keeps serving")
    func oversizedHeaders() async throws {
        let proxy = try await Self.demoProxy()
        let connection = try RawConnection(port: proxy.port)
        connection.send(
            "GET /users/1 HTTP/1.1\r\nHost: x\r\nX-Big: " + String(repeating: "a", count: 200_000) + "\r\n\r\n")
        let answer = connection.receive()
        #expect(answer.text.hasPrefix("HTTP/1.1 431"), "\(answer.text.prefix(200))")
        #expect(answer.text.contains("header section is larger"))
        try await Self.stillServing(proxy)
        await proxy.stop()
    }

    @Test("pipelined requests are answered in order")
    func pipelining() async throws {
        let proxy = try await Self.demoProxy()
        let connection = try RawConnection(port: proxy.port)
        connection.send(
            "GET /users/1 HTTP/1.1\r\nHost: x\r\n\r\nGET /users/42 HTTP/1.1\r\nHost: x\r\n\r\nGET /users HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
        )
        let answer = connection.receive()
        let statuses = answer.text.components(separatedBy: "HTTP/1.1 ").dropFirst().map { $0.prefix(3) }
        #expect(statuses == ["200", "404", "200"])
        #expect(answer.text.range(of: "Ada Lovelace")!.lowerBound < answer.text.range(of: "no such user")!.lowerBound)
        #expect(answer.closed)
        await proxy.stop()
    }

    @Test("a client that disconnects mid-response does not disturb others")
    func disconnectMidResponse() async throws {
        let directory = try Fixtures.temporaryDirectory()
        let cassette = directory + "/big.json"
        try CassetteFile.save(
            Cassette(interactions: [
                Interaction(
                    request: HTTP.Request(method: .get, target: "/big"),
                    response: HTTP.Response(status: 200, headers: [:], body: Fixtures.large(8_000_000)),
                    recordedAt: "", durationMilliseconds: 0)
            ]), to: cassette)
        let proxy = try await ProxyHarness.start(ProxyConfiguration(mode: .replay, cassettePath: cassette))
        for _ in 0..<3 {
            let connection = try RawConnection(port: proxy.port)
            connection.send("GET /big HTTP/1.1\r\nHost: x\r\n\r\n")
            _ = connection.receive { $0.count > 1000 }
            connection.closeNow()
        }
        #expect(try await proxy.client.send(.get, "/big").body.count == 8_000_000)
        await proxy.stop()
    }

    @Test("a client that disconnects mid-body does not disturb others")
    func disconnectMidBody() async throws {
        let proxy = try await Self.demoProxy()
        let connection = try RawConnection(port: proxy.port)
        connection.send("POST /users HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{\"name\":")
        connection.closeNow()
        try await Self.stillServing(proxy)
        await proxy.stop()
    }

    @Test("Expect: 100-continue gets its interim answer at once")
    func expectContinue() async throws {
        let proxy = try await Self.demoProxy()
        let connection = try RawConnection(port: proxy.port)
        connection.send("POST /users HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nExpect: 100-continue\r\n\r\n")
        let interim = connection.receive { $0.contains("\r\n\r\n") }
        #expect(interim.text.hasPrefix("HTTP/1.1 100 Continue"))
        connection.send("{}")
        let final = connection.receive { $0.contains("X-Kakapo-Source") && $0.hasSuffix("\n") }
        #expect(final.text.contains("HTTP/1.1 404"), "\(final.text)")
        await proxy.stop()
    }

    @Test("a silent connection is closed after the idle timeout")
    func idleTimeout() async throws {
        let proxy = try await Self.demoProxy { $0.idleTimeout = 0.3 }
        let connection = try RawConnection(port: proxy.port, timeout: 5)
        // Without a close the read gives up after its 5-second timeout and reports the connection open.
        let answer = connection.receive()
        #expect(answer.closed)
        try await Self.stillServing(proxy)
        await proxy.stop()
    }

    @Test("a client that dribbles its request is closed at the request deadline")
    func slowClient() async throws {
        let proxy = try await Self.demoProxy {
            $0.requestReadTimeout = 0.5
            $0.idleTimeout = 600
        }
        let connection = try RawConnection(port: proxy.port, timeout: 5)
        for piece in ["GET /users/1 HT", "TP/1.1\r\n", "Host: x\r\n", "X-Slow: 1\r\n", "X-Slower: 2\r\n"] {
            connection.send(piece)
            try await Task.sleep(for: .milliseconds(200))
        }
        let answer = connection.receive()
        // `closed` can only be the request deadline's doing: the idle timeout is ten minutes away, and
        // without a close the read gives up after its 5-second timeout and reports the connection open.
        // No wall-clock bound: the test's own sleeps stretch on a loaded 2-core machine.
        #expect(answer.closed)
        #expect(answer.text.isEmpty, "no answer to a request that never finished")
        try await Self.stillServing(proxy)
        await proxy.stop()
    }

    @Test("with an admin token the admin endpoints require it")
    func adminToken() async throws {
        let proxy = try await Self.demoProxy { $0.adminToken = "s3cret-admin-token" }
        #expect(try await proxy.client.send(.get, "/__kakapo/health").status == 401)
        let authorized = try await proxy.client.send(
            .get, "/__kakapo/health", headers: ["Authorization": "Bearer s3cret-admin-token"])
        #expect(authorized.status == 200)
        await proxy.stop()
    }
}
