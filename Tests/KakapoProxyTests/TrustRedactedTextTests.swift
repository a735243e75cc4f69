import Foundation
import Kakapo
import KakapoTestSupport
import Testing

/// A plain-text request body whose secret was cut out in place still matches on replay.
@Suite("Trust: redacted text bodies match")
struct TrustRedactedTextTests {
    @Test("a text body recorded as 'Bearer [REDACTED]' replays for another token, and misses for other text")
    func textBodyWithBearer() async throws {
        let cassette = try Fixtures.temporaryDirectory() + "/text.json"
        let upstream = try await TestUpstream.start { _ in
            .response(HTTP.Response(status: 200, headers: ["Content-Type": "text/plain"], body: Array("ok".utf8)))
        }
        let recorder = try await ProxyHarness.start(
            ProxyConfiguration(
                mode: .new, cassettePath: cassette, upstream: UpstreamConfiguration(baseURL: upstream.baseURL)))
        let headers = HTTP.Headers([("Content-Type", "text/plain")])
        let recorded = try await recorder.client.send(
            .post, "/notes", headers: headers, body: Array("note for Bearer abc123.def456-ghi\n".utf8))
        #expect(recorded.status == 200)
        await recorder.stop()
        await upstream.stop()
        let text = try String(contentsOfFile: cassette, encoding: .utf8)
        #expect(!text.contains("abc123.def456-ghi"))
        #expect(text.contains("Bearer [REDACTED]"), "\(text)")

        let player = try await ProxyHarness.replaying(cassette)
        let other = try await player.client.send(
            .post, "/notes", headers: headers, body: Array("note for Bearer zzz999.yyy888-xxx\n".utf8))
        #expect(other.status == 200 && other.source == "cassette", "\(other.text)")
        let different = try await player.client.send(
            .post, "/notes", headers: headers, body: Array("another note for Bearer zzz999.yyy888-xxx\n".utf8))
        #expect(different.source == "miss")
        await player.stop()
    }
}
