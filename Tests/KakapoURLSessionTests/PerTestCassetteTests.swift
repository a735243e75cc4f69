import Foundation
import Kakapo
import KakapoTestSupport
import KakapoTesting
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Per-test cassettes: recorded on a test's first run, replayed on the next, failing the test on a miss.
@Suite("Per-test cassettes")
struct PerTestCassetteTests {
    @Test("recorded on the first run, replayed with the upstream stopped, and a changed request fails naming the miss")
    func recordReplayMiss() async throws {
        let directory = try Fixtures.temporaryDirectory() + "/cassettes"
        let upstream = try await InProcessTests.upstream()
        let url = URL(string: "http://api.test/users/1")!
        let first = try await withCassette(
            "UserTests/firstUser", in: directory, upstream: upstream.baseURL, mode: .once
        ) {
            cassette in
            #expect(cassette.mode == .new)
            let (data, response) = try await cassette.session.data(from: url)
            #expect((response as? HTTPURLResponse)?.value(forHTTPHeaderField: "X-Kakapo-Source") == "upstream")
            return data
        }
        await upstream.stop()
        #expect(FileManager.default.fileExists(atPath: directory + "/UserTests/firstUser.json"))

        let second = try await withCassette(
            "UserTests/firstUser", in: directory, upstream: upstream.baseURL, mode: .once
        ) {
            cassette in
            #expect(cassette.mode == .replay)
            let (data, response) = try await cassette.session.data(from: url)
            #expect((response as? HTTPURLResponse)?.value(forHTTPHeaderField: "X-Kakapo-Source") == "cassette")
            return data
        }
        #expect(second == first)

        do {
            try await withCassette("UserTests/firstUser", in: directory, mode: .once) { cassette in
                _ = try await cassette.session.data(from: URL(string: "http://api.test/users/2")!)
            }
            Issue.record("a request that matched no recording did not fail")
        } catch let error as CassetteTestError {
            #expect(error.description.contains("1 request(s) matched no recording"))
            #expect(error.description.contains("miss: GET /users/2"))
        }
    }

    @Test("the socket server of a cassette answers clients that are not URLSession")
    func socketServer() async throws {
        let directory = try Fixtures.temporaryDirectory()
        let upstream = try await InProcessTests.upstream()
        defer { Task { await upstream.stop() } }
        try await withCassette("socket", in: directory, upstream: upstream.baseURL, mode: .new) { cassette in
            let base = try await cassette.baseURL()
            let client = try TestClient(port: base.port ?? 0)
            defer { client.shutdown() }
            let answer = try await client.send(.get, "/over/socket")
            #expect(answer.headers["X-Kakapo-Source"] == "upstream")
            #expect(answer.text.contains("/over/socket"))
        }
        let cassette = try CassetteFile.load(directory + "/socket.json")
        #expect(cassette.interactions.map(\.request.target) == ["/over/socket"])
    }

    @Test("KAKAPO_RECORD picks the mode; CI never records by default")
    func environment() throws {
        #expect(try CassetteRecording.mode([:]) == .once)
        #expect(try CassetteRecording.mode(["CI": "true"]) == .replay)
        #expect(try CassetteRecording.mode(["CI": "true", "KAKAPO_RECORD": "all"]) == .all)
        #expect(try CassetteRecording.mode(["KAKAPO_RECORD": "NEW"]) == .new)
        #expect(try CassetteRecording.mode(["KAKAPO_RECORD": "none"]) == .replay)
        #expect(throws: CassetteTestError.self) { try CassetteRecording.mode(["KAKAPO_RECORD": "sometimes"]) }
        #expect(CassetteRecording.upstream(["KAKAPO_UPSTREAM": "http://127.0.0.1:9"]) == "http://127.0.0.1:9")
    }

    @Test("a missing cassette that must not be recorded is a clear error")
    func missingCassette() async throws {
        let directory = try Fixtures.temporaryDirectory()
        do {
            try await withCassette("absent", in: directory, mode: .replay) { _ in }
            Issue.record("a missing cassette did not fail")
        } catch let error as CassetteTestError {
            #expect(error.description.contains("absent.json does not exist and KAKAPO_RECORD=none does not record it"))
        }
    }
}

/// The trait, with a cassette committed beside the tests (`Fixtures/cassettes/TraitTests/...`).
@Suite("Cassette trait", .cassette(in: "Tests/KakapoURLSessionTests/Fixtures/cassettes"))
struct TraitTests {
    @Test("each test of the suite replays the cassette named after the suite and the test")
    func replaysItsOwnCassette() async throws {
        let cassette = try #require(CassetteContext.current)
        #expect(cassette.path.hasSuffix("cassettes/TraitTests/replaysItsOwnCassette.json"))
        let (data, response) = try await cassette.session.data(from: URL(string: "http://api.test/hello")!)
        #expect((response as? HTTPURLResponse)?.value(forHTTPHeaderField: "X-Kakapo-Source") == "cassette")
        #expect(String(decoding: data, as: UTF8.self) == #"{"hello":"trait"}"#)
    }
}
