import Foundation
import Kakapo
import KakapoTestSupport
import Testing

/// What the engine split must keep: a client that leaves a recorded stream is no longer in flight, and
/// shutting down twice returns.
@Suite("Wire lifecycle")
struct WireLifecycleTests {
    @Test(
        "a client that leaves a recorded stream mid-way is no longer in flight: shutdown does not wait out the grace period"
    )
    func leftStreamIsNotInFlight() async throws {
        let cassette = try Fixtures.temporaryDirectory() + "/stream.json"
        let events = ["data: 1\n\n", "data: 2\n\n"].map { Array($0.utf8) }
        let interaction = Interaction(
            request: HTTP.Request(method: .get, target: "/events"),
            response: HTTP.Response(
                status: 200, headers: ["Content-Type": "text/event-stream"], body: events.flatMap { $0 }),
            recordedAt: "2026-11-24T00:00:00Z", durationMilliseconds: 1000,
            chunks: [
                ResponseChunk(offsetMilliseconds: 0, bytes: events[0]),
                ResponseChunk(offsetMilliseconds: 800, bytes: events[1]),
            ])
        try CassetteFile.save(Cassette(interactions: [interaction]), to: cassette)
        var configuration = ProxyConfiguration(port: 0, mode: .replay, cassettePath: cassette, shutdownGracePeriod: 8)
        configuration.streamTiming = .recorded
        let server = try ProxyServer(configuration: configuration)
        let port = try await server.start()
        let connection = try RawConnection(port: port)
        connection.send("GET /events HTTP/1.1\r\nHost: localhost\r\n\r\n")
        let first = connection.receive { $0.contains("data: 1") }
        #expect(first.text.contains("data: 1"), "\(first.text)")
        connection.closeNow()
        // The second event falls due after the client left.
        try await Task.sleep(for: .milliseconds(1200))
        let started = ContinuousClock.now
        await server.shutdown()
        // The grace period is 8 s: well under it means shutdown did not wait it out.
        #expect(ContinuousClock.now - started < .seconds(6), "shutdown waited for a stream nobody reads")
    }

    @Test("shutting an engine with an upstream down twice returns both times")
    func shutdownTwice() async throws {
        let upstream = try await TestUpstream.start { _ in .response(HTTP.Response(status: 200)) }
        let kakapo = try InProcessKakapo(mode: .passthrough, upstream: upstream.baseURL)
        let answer = await kakapo.pipeline.answer(HTTP.Request(method: .get, target: "/ping"))
        #expect(answer.status == 200)
        await kakapo.shutdown()
        let second = await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                await kakapo.shutdown()
                return true
            }
            group.addTask {
                try? await Task.sleep(for: .seconds(10))
                return false
            }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
        #expect(second, "the second shutdown did not return within 10 s")
        await upstream.stop()
    }
}
