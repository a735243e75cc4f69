import Foundation
import Kakapo
import KakapoTestSupport
import Testing

/// The libcurl client on its own: its transfer loops take new work whether they are busy or asleep, and
/// keep every answer with its request.
@Suite("Upstream client")
struct UpstreamClientTests {
    static func echo() async throws -> TestUpstream {
        try await TestUpstream.start { request in
            let reply = TestUpstream.Reply.response(
                HTTP.Response(status: 200, contentType: "text/plain", text: request.target))
            // Some answers take a while, so transfers finish out of order and overlap.
            return request.target.hasSuffix("7") ? .delayed(seconds: 0.02, reply: reply) : reply
        }
    }

    @Test("answers hundreds of requests in flight at once, more than may move at once, each with its own answer")
    func manyAtOnce() async throws {
        let upstream = try await Self.echo()
        let client = try UpstreamClient(
            configuration: UpstreamConfiguration(baseURL: upstream.baseURL, maximumConcurrentRequests: 8))
        let bodies = try await withThrowingTaskGroup(of: (Int, String).self) { group in
            for index in 0..<400 {
                group.addTask {
                    let response = try await client.send(
                        client.prepare(HTTP.Request(method: .get, target: "/n/\(index)")))
                    return (index, String(decoding: response.body, as: UTF8.self))
                }
            }
            return try await group.reduce(into: [:]) { $0[$1.0] = $1.1 }
        }
        #expect(bodies.count == 400)
        #expect(bodies.allSatisfy { $0.value == "/n/\($0.key)" })
        client.shutdown()
        await upstream.stop()
    }

    @Test("a request sent to a client idle for a while is answered at once, not when its loop next looks")
    func wakesWhenIdle() async throws {
        let upstream = try await Self.echo()
        let client = try UpstreamClient(configuration: UpstreamConfiguration(baseURL: upstream.baseURL))
        _ = try await client.send(client.prepare(HTTP.Request(method: .get, target: "/first")))
        for round in 0..<3 {
            // Longer than a loop waits for sockets when it has nothing to do (a second).
            try await Task.sleep(for: .milliseconds(1200))
            let clock = ContinuousClock()
            let started = clock.now
            // Timed where the answer arrives (libcurl's thread), not where the test resumes: under the whole
            // suite Swift's cooperative pool can be busy for most of a second, which says nothing of the loop.
            let (result, took) = await withCheckedContinuation { continuation in
                client.send(client.prepare(HTTP.Request(method: .get, target: "/later/\(round)"))) { result in
                    continuation.resume(returning: (result, clock.now - started))
                }
            }
            let response = try result.get()
            #expect(String(decoding: response.body, as: UTF8.self) == "/later/\(round)")
            // A missed wake-up would leave it waiting until the loop looks again on its own, about 800 ms
            // later; a loaded machine may take a few hundred ms anyway.
            #expect(took < .milliseconds(600))
        }
        client.shutdown()
        await upstream.stop()
    }

    @Test("shutdown lets transfers in flight finish, then refuses new ones")
    func shutdown() async throws {
        let upstream = try await TestUpstream.start { _ in
            .delayed(
                seconds: 0.2, reply: .response(HTTP.Response(status: 200, contentType: "text/plain", text: "late")))
        }
        let client = try UpstreamClient(configuration: UpstreamConfiguration(baseURL: upstream.baseURL))
        let answer = Task { try await client.send(client.prepare(HTTP.Request(method: .get, target: "/slow"))) }
        try await Task.sleep(for: .milliseconds(50))
        client.shutdown()
        #expect(String(decoding: try await answer.value.body, as: UTF8.self) == "late")
        await #expect(throws: UpstreamError.self) {
            try await client.send(client.prepare(HTTP.Request(method: .get, target: "/after")))
        }
        await upstream.stop()
    }
}
