import Foundation
import Kakapo
import KakapoTestSupport
import Testing

/// `maximumAge` (`--max-age`): recordings older than it are stale.
@Suite("Expiry")
struct ExpiryTests {
    static let thirtyDays = 30.0 * 86_400

    /// A cassette with GET /old recorded in 2020 and GET /new recorded now, and the upstream it came from.
    static func cassette() async throws -> (path: String, upstream: TestUpstream) {
        let path = try Fixtures.temporaryDirectory() + "/api.json"
        let upstream = try await TestUpstream.start { request in
            .response(HTTP.Response(status: 200, contentType: "text/plain", text: "fresh \(request.path)"))
        }
        let recorder = try await ProxyHarness.recording(upstream, cassette: path)
        _ = try await recorder.client.send(.get, "/old")
        _ = try await recorder.client.send(.get, "/new")
        await recorder.stop()
        var cassette = try CassetteFile.load(path)
        cassette.interactions[0].recordedAt = "2020-01-01T00:00:00.000Z"
        cassette.interactions[0].response.body = Array("recorded in 2020".utf8)
        try CassetteFile.save(cassette, to: path)
        return (path, upstream)
    }

    @Test("replay serves stale recordings but names them in the summary; without a maximum age nothing is stale")
    func replayWarns() async throws {
        let (path, upstream) = try await Self.cassette()
        await upstream.stop()
        let harness = try await ProxyHarness.start(
            ProxyConfiguration(mode: .replay, cassettePath: path, maximumAge: Self.thirtyDays))
        let old = try await harness.client.send(.get, "/old")
        #expect(old.source == "cassette")
        #expect(old.text == "recorded in 2020")
        _ = try await harness.client.send(.get, "/new")
        let summary = await harness.stop()
        #expect(summary.stale == ["#0 GET /old (recorded 2020-01-01T00:00:00.000Z)"])
        #expect(summary.text.contains("1 stale recording was replayed (older than 30d):\n  stale: #0 GET /old"))

        let unlimited = try await ProxyHarness.replaying(path)
        _ = try await unlimited.client.send(.get, "/old")
        #expect(await unlimited.stop().stale.isEmpty)
    }

    @Test("modes that record re-record stale recordings in place and keep the fresh ones")
    func recordingModesRefresh() async throws {
        let (path, upstream) = try await Self.cassette()
        defer { Task { await upstream.stop() } }
        for mode in [ProxyMode.new, .once] {
            if mode == .once {
                var cassette = try CassetteFile.load(path)
                cassette.interactions[0].recordedAt = "2020-01-01T00:00:00.000Z"
                try CassetteFile.save(cassette, to: path)
            }
            let harness = try await ProxyHarness.start(
                ProxyConfiguration(
                    mode: mode, cassettePath: path, upstream: UpstreamConfiguration(baseURL: upstream.baseURL),
                    maximumAge: Self.thirtyDays))
            let old = try await harness.client.send(.get, "/old")
            let new = try await harness.client.send(.get, "/new")
            let summary = await harness.stop()
            if mode == .new {
                #expect(old.source == "upstream")
                #expect(old.text == "fresh /old")
                #expect(new.source == "cassette")
                #expect(summary.recorded == 1)
                let cassette = try CassetteFile.load(path)
                #expect(cassette.interactions.map(\.request.target) == ["/old", "/new"])
                #expect(
                    cassette.interactions[0].recordedAt.hasPrefix("20")
                        && !cassette.interactions[0].recordedAt.hasPrefix("2020"))
            } else {
                // once with an existing file replays only: stale recordings are named, not refreshed.
                #expect(old.source == "cassette")
                #expect(summary.stale.count == 1)
            }
        }
    }
}
