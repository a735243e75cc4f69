import Foundation
import Kakapo
import KakapoTestSupport
import Testing

/// Upstream failures: each answers 502 or 504 with a JSON body saying which, nothing half-received is
/// recorded, and the proxy keeps serving.
@Suite("Upstream faults")
struct UpstreamFaultTests {
    static func code(_ response: HTTP.Response) throws -> String? {
        try JSONParser.parse(response.body)["code"]?.stringValue
    }

    @Test("TLS failure, reset mid-body and an oversized response each get 502 with their reason")
    func faults() async throws {
        let cassette = try Fixtures.temporaryDirectory() + "/faults.json"
        let upstream = try await TestUpstream.start { request in
            switch request.path {
            case "/reset": return .truncated(declared: 1000, sent: Array("only part".utf8))
            case "/huge": return .response(HTTP.Response(status: 200, headers: [:], body: Fixtures.large(200_000)))
            default: return .response(HTTP.Response(status: 200, contentType: "text/plain", text: "fine"))
            }
        }
        let proxy = try await ProxyHarness.start(
            ProxyConfiguration(
                mode: .new, cassettePath: cassette,
                upstream: UpstreamConfiguration(baseURL: upstream.baseURL, maximumResponseBytes: 100_000)))
        let reset = try await proxy.client.send(.get, "/reset")
        #expect(reset.status == 502)
        #expect(try Self.code(reset) == "connection-lost")
        let huge = try await proxy.client.send(.get, "/huge")
        #expect(huge.status == 502)
        #expect(try Self.code(huge) == "response-too-large")
        #expect(try await proxy.client.send(.get, "/fine").text == "fine")
        let summary = await proxy.stop()

        // TLS spoken to a server that only speaks plain HTTP.
        let tls = try await ProxyHarness.start(
            ProxyConfiguration(
                mode: .passthrough, upstream: UpstreamConfiguration(baseURL: "https://127.0.0.1:\(upstream.port)")))
        let handshake = try await tls.client.send(.get, "/fine")
        #expect(handshake.status == 502)
        #expect(try Self.code(handshake) == "tls-failure")
        await tls.stop()
        await upstream.stop()

        #expect(summary.recorded == 1)
        #expect(try CassetteFile.load(cassette).interactions.map(\.request.target) == ["/fine"])
    }

    @Test("when the cassette cannot be saved the server keeps answering, and saving resumes when it can")
    func saveFailure() async throws {
        let directory = try Fixtures.temporaryDirectory()
        let cassette = directory + "/c.json"
        let upstream = try await TestUpstream.start { request in
            .response(HTTP.Response(status: 200, contentType: "text/plain", text: request.path))
        }
        let proxy = try await ProxyHarness.recording(upstream, cassette: cassette)
        _ = try await proxy.client.send(.get, "/first")
        try await Task.sleep(for: .milliseconds(400))
        let saved = try Data(contentsOf: URL(fileURLWithPath: cassette))
        // The folder disappears: saves fail, answers go on, and the last complete file is not damaged.
        let moved = directory + "-moved"
        try FileManager.default.moveItem(atPath: directory, toPath: moved)
        #expect(try await proxy.client.send(.get, "/second").text == "/second")
        try await Task.sleep(for: .milliseconds(400))
        #expect(try Data(contentsOf: URL(fileURLWithPath: moved + "/c.json")) == saved)
        // The folder is back: the next save writes everything.
        try FileManager.default.moveItem(atPath: moved, toPath: directory)
        #expect(try await proxy.client.send(.get, "/third").text == "/third")
        let summary = await proxy.stop()
        await upstream.stop()
        #expect(summary.saveError == nil)
        #expect(try CassetteFile.load(cassette).interactions.map(\.request.target) == ["/first", "/second", "/third"])
    }
}

@Suite("Upstream faults: DNS")
struct DNSFaultTests {
    @Test("a host that does not resolve answers 502 dns-failure")
    func dnsFailure() async throws {
        let proxy = try await ProxyHarness.start(
            ProxyConfiguration(
                mode: .passthrough,
                upstream: UpstreamConfiguration(baseURL: "http://kakapo-test.invalid", connectTimeout: 5, timeout: 10)))
        let answer = try await proxy.client.send(.get, "/")
        #expect(answer.status == 502)
        #expect(try UpstreamFaultTests.code(answer) == "dns-failure")
        await proxy.stop()
    }
}
