import Foundation
import Kakapo
import KakapoTestSupport
import Testing

/// The inspector page's files, `/__kakapo/ui`: built in, with a strict Content-Security-Policy, and the
/// admin rules (the token exception for the files alone).
@Suite("Inspector: the page's files")
struct InspectorPageTests {
    static let policy =
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

    static func expectPageHeaders(_ response: HTTP.Response) {
        #expect(response.headers["Content-Security-Policy"] == policy)
        #expect(response.headers["X-Content-Type-Options"] == "nosniff")
        #expect(response.headers["Referrer-Policy"] == "no-referrer")
        #expect(response.headers["Cache-Control"] == "no-cache")
    }

    @Test("the page and its modules are served with a strict policy; an unknown name is a 404")
    func files() async throws {
        let harness = try await ProxyHarness.serving(routes: "{}")
        defer { Task { await harness.stop() } }
        // The page is on the admin listener; the proxy port redirects there.
        let adminPort = try #require(harness.server.adminPort)
        let admin = try TestClient(port: adminPort)
        defer { admin.shutdown() }
        let redirect = try await harness.client.send(.get, "/__kakapo/ui/app.js")
        #expect(redirect.status == 307)
        #expect(redirect.headers["Location"] == "http://127.0.0.1:\(adminPort)/__kakapo/ui/app.js")
        for target in ["/__kakapo/ui", "/__kakapo/ui/"] {
            let page = try await admin.send(.get, target)
            #expect(page.status == 200)
            #expect(page.headers["Content-Type"] == "text/html; charset=utf-8")
            #expect(page.text.contains("app.js"))
            Self.expectPageHeaders(page)
        }
        let script = try await admin.send(.get, "/__kakapo/ui/app.js")
        #expect(script.status == 200)
        #expect(script.headers["Content-Type"] == "text/javascript; charset=utf-8")
        Self.expectPageHeaders(script)
        for name in ["nope.js", "web/app.js", "%2e%2e%2fapp.js", "index.html%00"] {
            let missing = try await admin.send(.get, "/__kakapo/ui/\(name)")
            #expect(missing.status == 404, "\(name)")
            Self.expectPageHeaders(missing)
        }
        // Fetching the page is not traffic under test.
        let journal = try JSONParser.parse(try await harness.client.send(.get, "/__kakapo/requests").body)
        #expect(journal["requests"]?.arrayValue?.allSatisfy { $0["source"] == "admin" } == true)
    }

    @Test("with an admin token the page loads without it and the data does not; a rebinding Host is refused")
    func token() async throws {
        var configuration = ProxyConfiguration()
        configuration.adminToken = "tok-123"
        let harness = try await ProxyHarness.serving(routes: "{}", configuration)
        defer { Task { await harness.stop() } }
        let admin = try TestClient(port: try #require(harness.server.adminPort))
        defer { admin.shutdown() }
        #expect(try await admin.send(.get, "/__kakapo/ui").status == 200)
        #expect(try await admin.send(.get, "/__kakapo/ui/api.js").status == 200)
        #expect(try await harness.client.send(.get, "/__kakapo/ui").status == 307)
        #expect(try await harness.client.send(.get, "/__kakapo/events").status == 401)
        #expect(try await harness.client.send(.get, "/__kakapo/requests/1").status == 401)
        #expect(try await harness.client.send(.get, "/__kakapo/cassette").status == 401)
        let reader = try EventStreamReader(port: harness.port, headers: ["Authorization: Bearer tok-123"])
        #expect(reader.readHead()?.hasPrefix("HTTP/1.1 200") == true)

        let rebound = RawConnectionCall.send(
            harness.port, "GET /__kakapo/ui HTTP/1.1\r\nHost: evil.example:\(harness.port)\r\nConnection: close\r\n\r\n"
        )
        #expect(rebound.hasPrefix("HTTP/1.1 403"), "\(rebound)")
    }
}

/// One request over a plain socket, answered until the server closes.
enum RawConnectionCall {
    static func send(_ port: Int, _ request: String) -> String {
        guard let connection = try? RawConnection(port: port) else { return "" }
        connection.send(request)
        return connection.receive().text
    }
}
