import Foundation
import Kakapo
import KakapoEngine
import KakapoTestSupport
import Testing

/// `GET /__kakapo/events`, read over a real socket as a script or the inspector page reads it.
@Suite("Inspector: the event stream")
struct InspectorEventsTests {
    static let routes =
        #"{"routes": [{"path": "/users/:id", "response": {"json": {"id": "{{params.id}}"}}}, {"path": "/big/:n", "response": {"text": "ok"}}]}"#

    @Test("a request appears in the stream within a second with the contract's fields; admin requests never do")
    func requestAppears() async throws {
        let harness = try await ProxyHarness.serving(routes: Self.routes)
        defer { Task { await harness.stop() } }
        let reader = try EventStreamReader(port: harness.port)
        let head = try #require(reader.readHead())
        #expect(head.hasPrefix("HTTP/1.1 200"), "\(head)")
        #expect(head.lowercased().contains("content-type: text/event-stream"))
        #expect(head.lowercased().contains("cache-control: no-store"))
        _ = try await harness.client.send(.get, "/__kakapo/health")
        _ = try await harness.client.send(.get, "/__kakapo/requests")
        let sent = ContinuousClock.now
        let answer = try await harness.client.send(.post, "/users/7?verbose=1", body: Array("hello".utf8))
        #expect(answer.status == 200)
        let arrived = reader.read { $0.requests.contains { $0["target"] == "/users/7?verbose=1" } }
        #expect(arrived)
        #expect(ContinuousClock.now - sent < .seconds(5))
        let event = try #require(reader.requests.first { $0["target"] == "/users/7?verbose=1" })
        #expect(event["method"] == "POST")
        #expect(event["url"]?.stringValue == "http://127.0.0.1:\(harness.port)/users/7?verbose=1")
        #expect(event["host"]?.stringValue == "127.0.0.1:\(harness.port)")
        #expect(event["status"] == 200)
        #expect(event["source"] == "route")
        #expect(event["requestBytes"] == 5)
        #expect(event["responseBytes"] == 10)
        #expect(event["contentType"] == "application/json")
        #expect(event["stream"] == false)
        #expect(event["webSocket"] == false)
        #expect((event["ms"]?.numberValue?.doubleValue ?? -1) >= 0)
        let time = try #require(event["time"]?.stringValue)
        #expect(time.wholeMatch(of: /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/) != nil, "\(time)")
        let id = try #require(event["id"]?.numberValue?.intValue)
        #expect(reader.events.first { $0.data?["target"] == "/users/7?verbose=1" }?.id == id)
        // Admin requests (the stream's own, health, the journal) are not in it.
        #expect(!reader.requests.contains { $0["target"]?.stringValue?.hasPrefix("/__kakapo") == true })
        #expect(reader.requests.count == 1, "\(reader.requests)")
    }

    @Test("?after, Last-Event-ID and ?backlog=none choose where the stream starts")
    func startingPoint() async throws {
        let harness = try await ProxyHarness.serving(routes: Self.routes)
        defer { Task { await harness.stop() } }
        for id in 1...3 { _ = try await harness.client.send(.get, "/users/\(id)") }
        // A request is journaled just after its answer is written: the last one may take a moment.
        var journal: JSONValue = .null
        var journaled: [(id: Int, url: JSONValue?)] = []
        for _ in 0..<100 where journaled.count < 3 {
            journal = try JSONParser.parse(try await harness.client.send(.get, "/__kakapo/requests").body)
            journaled = (journal["requests"]?.arrayValue ?? []).filter { $0["source"] == "route" }.compactMap {
                guard let id = $0["id"]?.numberValue?.intValue else { return nil }
                return (id, $0["url"])
            }.sorted { $0.id < $1.id }
        }
        // Each request may come on a connection of its own, on another event loop: the ids follow the order
        // they were journaled in, which need not be the order they were sent in.
        try #require(journaled.count == 3, "\(journal)")
        let ids = journaled.map(\.id)
        #expect(journal["requests"]?.arrayValue?.first?["time"]?.stringValue?.hasSuffix("Z") == true)

        let all = try EventStreamReader(port: harness.port)
        #expect(all.read { $0.requests.count == 3 })
        let after = try EventStreamReader(port: harness.port, target: "/__kakapo/events?after=\(ids[0])")
        #expect(after.read { $0.requests.count == 2 })
        // The journal's URLs are relative: the events' targets.
        #expect(after.requests.map { $0["target"] } == journaled[1...].map(\.url))
        let resumed = try EventStreamReader(port: harness.port, headers: ["Last-Event-ID: \(ids[1])"])
        #expect(resumed.read { $0.requests.count == 1 })
        #expect(resumed.requests.map { $0["target"] } == [journaled[2].url])
        let fresh = try EventStreamReader(port: harness.port, target: "/__kakapo/events?backlog=none")
        #expect(fresh.readHead() != nil)
        _ = try await harness.client.send(.get, "/users/4")
        #expect(fresh.read { $0.requests.count == 1 })
        #expect(fresh.requests.map { $0["target"] } == ["/users/4"])
        // Nothing came twice to those reading all along.
        #expect(all.read { $0.requests.count == 4 })
        #expect(after.read { $0.requests.count == 3 })
        #expect(
            try await harness.client.send(.get, "/__kakapo/events?after=x").status == 400,
            "a bad id is refused")
    }

    @Test("a reader that never reads does not hold the proxy back, and once it reads is told what it dropped")
    func stalledReader() async throws {
        let harness = try await ProxyHarness.serving(routes: Self.routes)
        defer { Task { await harness.stop() } }
        let stalled = try EventStreamReader(port: harness.port, target: "/__kakapo/events?backlog=none")
        #expect(stalled.readHead() != nil)
        // About 4 KB per event: 16 MB of events, more than the reader's 1 MiB and the sockets' buffers.
        let padding = String(repeating: "p", count: 3800)
        let started = ContinuousClock.now
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<4 {
                group.addTask {
                    for n in 0..<1000 {
                        let answer = try await harness.client.send(.get, "/big/\(worker)-\(n)?pad=\(padding)")
                        #expect(answer.status == 200)
                    }
                }
            }
            try await group.waitForAll()
        }
        let elapsed = ContinuousClock.now - started
        // A loose guard against a hang: the reader's stall must not pace the proxy, which would stop it for
        // good once the reader's buffers are full. 4,000 requests take a second or two on a quiet machine; a CI
        // run beside three builds on 2 cores once took 35 s.
        #expect(elapsed < .seconds(90))
        let quick = ContinuousClock.now
        #expect(try await harness.client.send(.get, "/users/1").status == 200)
        #expect(ContinuousClock.now - quick < .seconds(10))
        // Now it reads: what it had, then how many it missed after which id, then the stream goes on.
        #expect(stalled.read(timeout: .seconds(20)) { $0.events.contains { $0.name == "dropped" } })
        let notice = try #require(stalled.events.first { $0.name == "dropped" }?.data)
        let dropped = try #require(notice["dropped"]?.numberValue?.intValue)
        let after = try #require(notice["after"]?.numberValue?.intValue)
        #expect(dropped > 0 && dropped < 4001, "\(notice)")
        #expect(stalled.requests.count + dropped <= 4001)
        #expect(stalled.requests.last.flatMap { $0["id"]?.numberValue?.intValue }.map { $0 >= after } ?? (after == 0))
        _ = try await harness.client.send(.get, "/users/99")
        #expect(stalled.read { $0.requests.contains { $0["target"] == "/users/99" } })
    }

    @Test("the stream ends when Kakapo stops, without holding the shutdown up")
    func endsAtShutdown() async throws {
        // A stream that held the shutdown up would hold it for the whole grace period: a minute here, far
        // beyond the bound below, which only guards against a hang on a loaded machine.
        var configuration = ProxyConfiguration()
        configuration.shutdownGracePeriod = 60
        let harness = try await ProxyHarness.serving(routes: Self.routes, configuration)
        let reader = try EventStreamReader(port: harness.port)
        #expect(reader.readHead() != nil)
        _ = try await harness.client.send(.get, "/users/1")
        #expect(reader.read { $0.requests.count == 1 })
        let started = ContinuousClock.now
        await harness.stop()
        // Well under a second on a quiet machine; a loaded 2-core one running the suite once took 10 s.
        #expect(ContinuousClock.now - started < .seconds(30))
        #expect(reader.read { $0.closed })
    }

    @Test("a reader that leaves is forgotten at once")
    func readerLeaves() async throws {
        let harness = try await ProxyHarness.serving(routes: Self.routes)
        defer { Task { await harness.stop() } }
        let reader = try EventStreamReader(port: harness.port)
        #expect(reader.readHead() != nil)
        #expect(harness.server.pipeline.inspectorEvents.readerCount == 1)
        reader.connection.closeNow()
        let deadline = ContinuousClock.now + .seconds(5)
        while harness.server.pipeline.inspectorEvents.readerCount > 0 && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(harness.server.pipeline.inspectorEvents.readerCount == 0)
    }

    @Test(
        "readers are bounded in number: past 32 the next gets 503 with Retry-After, and a place frees up when one leaves"
    )
    func readersBounded() async throws {
        let harness = try await ProxyHarness.serving(routes: Self.routes)
        defer { Task { await harness.stop() } }
        var readers: [EventStreamReader] = []
        for _ in 0..<InspectorEvents.readerLimit {
            let reader = try EventStreamReader(port: harness.port)
            #expect(reader.readHead()?.hasPrefix("HTTP/1.1 200") == true)
            readers.append(reader)
        }
        let refused = try EventStreamReader(port: harness.port)
        let head = refused.readHead() ?? ""
        #expect(head.hasPrefix("HTTP/1.1 503"), "\(head)")
        #expect(head.contains("Retry-After: 5"), "\(head)")
        // The variant: one that leaves gives its place back, and the newcomer gets a stream.
        readers.removeFirst().connection.closeNow()
        let deadline = ContinuousClock.now + .seconds(10)
        var admitted: String?
        while ContinuousClock.now < deadline {
            let again = try EventStreamReader(port: harness.port)
            admitted = again.readHead()
            if admitted?.hasPrefix("HTTP/1.1 200") == true {
                readers.append(again)
                break
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(admitted?.hasPrefix("HTTP/1.1 200") == true, "\(admitted ?? "nothing")")
        #expect(harness.server.pipeline.inspectorEvents.readerCount == InspectorEvents.readerLimit)
        for reader in readers { reader.connection.closeNow() }
    }
}
