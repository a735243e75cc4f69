import Foundation
import Kakapo
import KakapoTestSupport
import KakapoUpstream
import Testing

/// Record filters (`--record-only`, `--passthrough`) on the wire: a session that records honouring them,
/// streamed uploads and routes in front of them (their patterns: KakapoRecordFilterTests).
@Suite("Record filters")
struct RecordFilterTests {
    @Test("a passthrough path spelled with doubled slashes or ;parameters is forwarded live, never recorded")
    func mergedSlashesThroughTheProxy() async throws {
        let directory = try Fixtures.temporaryDirectory()
        let upstream = try await SessionTests.upstream()
        var configuration = ProxyConfiguration(mode: .new, upstream: UpstreamConfiguration(baseURL: upstream.baseURL))
        configuration.sessionDirectory = directory
        configuration.recordFilter = try RecordFilter(passthrough: ["/live/**"])
        let proxy = try await ProxyHarness.start(configuration)
        let id = try await SessionTests.open(proxy.port, #"{"cassette": "live.json", "mode": "new"}"#)
        for path in ["//live/x", "/live;x/y", "///live//z", "/kept"] {
            let answer = try await SessionTests.curl([
                "--path-as-is", "-H", "X-Kakapo-Session: \(id)", "http://127.0.0.1:\(proxy.port)\(path)",
            ])
            #expect(answer.headers["x-kakapo-source"] == (path == "/kept" ? "upstream" : "passthrough"), "\(path)")
        }
        let ended = try await SessionTests.admin(proxy.port, "DELETE", "/__kakapo/sessions/\(id)")
        #expect(ended.json["recorded"] as? Int == 1)
        let file = try String(contentsOfFile: directory + "/live.json", encoding: .utf8)
        #expect(file.contains("/kept"))
        #expect(!file.contains("/live"))
        _ = await proxy.stop()
        await upstream.stop()
    }

    @Test("a session whose mode records forwards filtered requests live and leaves them out of its cassette")
    func session() async throws {
        let directory = try Fixtures.temporaryDirectory()
        let upstream = try await SessionTests.upstream()
        var configuration = ProxyConfiguration(mode: .new, upstream: UpstreamConfiguration(baseURL: upstream.baseURL))
        configuration.sessionDirectory = directory
        configuration.recordFilter = try RecordFilter(passthrough: ["/health"])
        let proxy = try await ProxyHarness.start(configuration)
        let id = try await SessionTests.open(proxy.port, #"{"cassette": "filtered.json", "mode": "new"}"#)
        for path in ["/health", "/health", "/users/1"] {
            let answer = try await SessionTests.curl([
                "-H", "X-Kakapo-Session: \(id)", "http://127.0.0.1:\(proxy.port)\(path)",
            ])
            #expect(answer.body == "GET \(path)")
            #expect(answer.headers["x-kakapo-source"] == (path == "/health" ? "passthrough" : "upstream"))
        }
        #expect(upstream.received.map(\.path) == ["/health", "/health", "/users/1"])
        let ended = try await SessionTests.admin(proxy.port, "DELETE", "/__kakapo/sessions/\(id)")
        #expect(ended.json["recorded"] as? Int == 1)
        let file = try String(contentsOfFile: directory + "/filtered.json", encoding: .utf8)
        #expect(file.contains("/users/1"))
        #expect(!file.contains("/health"))
        let summary = await proxy.stop()
        #expect(summary.counts[.passthrough] == 2)
        #expect(summary.text.contains("2 requests passed through unrecorded (--record-only/--passthrough)"))
        await upstream.stop()
    }

    @Test("a streamed upload the filter keeps out goes upstream unrecorded, marked passthrough; others are recorded")
    func streamedUpload() async throws {
        let directory = try Fixtures.temporaryDirectory()
        let upstream = try await SessionTests.upstream()
        var configuration = ProxyConfiguration(
            mode: .new, cassettePath: directory + "/uploads.json",
            upstream: UpstreamConfiguration(baseURL: upstream.baseURL))
        configuration.recordFilter = try RecordFilter(passthrough: ["/uploads/**"])
        let proxy = try await ProxyHarness.start(configuration)
        let pipeline = proxy.server.pipeline
        func upload(_ path: String) async -> Answer {
            let body = RequestBodyStream(length: 5)
            return await withCheckedContinuation { continuation in
                pipeline.forward(HTTP.Request(method: .post, target: path), streaming: body) {
                    continuation.resume(returning: $0)
                }
                _ = body.append(Array("hello".utf8))
                body.finish()
            }
        }
        #expect(await upload("/uploads/a").source == .passthrough)
        #expect(await upload("/other").source == .upstream)
        #expect(upstream.received.map { String(decoding: $0.body, as: UTF8.self) } == ["hello", "hello"])
        let summary = await proxy.stop()
        #expect(summary.recorded == 1)
        await upstream.stop()
    }

    @Test("routes still answer before the filter: a route's path is answered by the route, the rest passes through")
    func routesFirst() async throws {
        let directory = try Fixtures.temporaryDirectory()
        let upstream = try await SessionTests.upstream()
        var configuration = ProxyConfiguration(
            port: 0, mode: .new, cassettePath: directory + "/routes.json",
            upstream: UpstreamConfiguration(baseURL: upstream.baseURL))
        configuration.recordFilter = try RecordFilter(passthrough: ["*"])
        let server = try ProxyServer(configuration: configuration)
        server.router.get("/route") { _ in ["from": "route"] }
        let client = try TestClient(port: try await server.start())
        #expect(try await client.send(.get, "/route").headers["X-Kakapo-Source"] == "route")
        #expect(try await client.send(.get, "/other").headers["X-Kakapo-Source"] == "passthrough")
        #expect(upstream.received.map(\.path) == ["/other"])
        client.shutdown()
        #expect(await server.shutdown().recorded == 0)
        await upstream.stop()
    }
}
