import Foundation
import Kakapo
import KakapoTestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Recorded streams in process with `--stream-timing` speeds and a recording that broke off.
@Suite("Kakapo in process: stream speeds and broken streams")
struct InProcessBrokenStreamTests {
    /// A cassette holding one event stream, two events 400 ms apart, broken off after them when `brokenOff`.
    static func cassette(brokenOff: Bool) throws -> String {
        let path = try Fixtures.temporaryDirectory() + "/stream.json"
        try """
        {"version": 1, "interactions": [{"request": {"method": "GET", "url": "/ticks"},
          "response": {"status": 200, "headers": [["Content-Type", "text/event-stream"]],
            "chunks": [{"offsetMs": 0, "text": "data: one\\n\\n"}, {"offsetMs": 400, "text": "data: two\\n\\n"}],
            "brokenOff": \(brokenOff)}}]}
        """.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    static func load(_ cassette: String, timing: StreamTiming) async throws -> (
        pieces: [(at: ContinuousClock.Instant, data: Data)], error: (any Error)?, started: ContinuousClock.Instant
    ) {
        var configuration = ProxyConfiguration(cassettePath: cassette)
        configuration.streamTiming = timing
        let kakapo = try InProcessKakapo(configuration: configuration)
        let started = ContinuousClock.now
        let loaded = await InProcessStreamingTests.Arrivals.load(
            try #require(URL(string: "http://api.test/ticks")), configuration: kakapo.sessionConfiguration())
        await kakapo.shutdown()
        return (loaded.pieces, loaded.error, started)
    }

    /// The last event came no earlier than `earliest` after the load began (a speed cannot make it early:
    /// the pacing is what this checks), and within `latest` of the first event, a bound against a hang only
    /// (generous: a busy CI machine once took 2.3 s over a 0.8 s stream). It counts from the first event,
    /// not from the start of the load: starting an in-process URLSession task alone took over 0.8 s once.
    static func expectLastEvent(
        of replayed: (
            pieces: [(at: ContinuousClock.Instant, data: Data)], error: (any Error)?, started: ContinuousClock.Instant
        ),
        notBefore earliest: Duration, within latest: Duration
    ) throws {
        let first = try #require(replayed.pieces.first).at
        let last = try #require(replayed.pieces.last).at
        #expect(last - replayed.started >= earliest, "\(last - replayed.started)")
        #expect(last - first < latest, "\(last - first)")
    }

    @Test("a stream recorded broken off fails with networkConnectionLost after its chunks, at 2x in about 200 ms")
    func brokenOff() async throws {
        let replayed = try await Self.load(Self.cassette(brokenOff: true), timing: try #require(StreamTiming("2x")))
        #expect(replayed.pieces.map(\.data).reduce(Data(), +) == Data("data: one\n\ndata: two\n\n".utf8))
        #expect((replayed.error as? URLError)?.code == .networkConnectionLost, "\(String(describing: replayed.error))")
        try Self.expectLastEvent(of: replayed, notBefore: .milliseconds(200), within: .seconds(15))
    }

    @Test("a compressed stream recorded broken off fails with networkConnectionLost too")
    func compressedBrokenOff() async throws {
        let path = try Fixtures.temporaryDirectory() + "/gzip.json"
        // The first bytes of a gzip member, cut off.
        try """
        {"version": 1, "interactions": [{"request": {"method": "GET", "url": "/ticks"},
          "response": {"status": 200, "headers": [["Content-Type", "text/event-stream"], ["Content-Encoding", "gzip"]],
            "chunks": [{"offsetMs": 0, "base64": "H4sIAAAAAAAAA0pJLEkEBAAA"}], "brokenOff": true}}]}
        """.write(toFile: path, atomically: true, encoding: .utf8)
        let replayed = try await Self.load(path, timing: .none)
        #expect((replayed.error as? URLError)?.code == .networkConnectionLost, "\(String(describing: replayed.error))")
    }

    @Test("the same stream not broken off ends normally, at 0.5x in about 800 ms")
    func endsNormally() async throws {
        let replayed = try await Self.load(Self.cassette(brokenOff: false), timing: try #require(StreamTiming("0.5x")))
        #expect(replayed.error == nil)
        #expect(replayed.pieces.map(\.data).reduce(Data(), +) == Data("data: one\n\ndata: two\n\n".utf8))
        try Self.expectLastEvent(of: replayed, notBefore: .milliseconds(800), within: .seconds(15))
    }
}
