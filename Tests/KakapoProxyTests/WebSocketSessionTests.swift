import Foundation
import Kakapo
import KakapoTestSupport
import Synchronization
import Testing

/// WebSocket conversations in cassette sessions (`--cassette-dir`, `POST /__kakapo/sessions`): an upgrade
/// carrying `X-Kakapo-Session` records into, and replays from, that session's cassette; real sockets, a
/// real NIO WebSocket upstream on port 0 and a real client.
@Suite("WebSocket conversations in cassette sessions")
struct WebSocketSessionTests {
    /// A server with sessions in `directory`, in front of `upstream` when given, and no cassette of its own.
    static func server(_ directory: String, upstream: String?) async throws -> ProxyHarness {
        var configuration = ProxyConfiguration(
            mode: upstream == nil ? .none : .new, upstream: upstream.map { UpstreamConfiguration(baseURL: $0) })
        configuration.sessionDirectory = directory
        return try await ProxyHarness.start(configuration)
    }

    /// Connects to `/chat` in session `id` (nil for none), offering `chat.v1`.
    static func connect(_ port: Int, session id: String?) async throws -> WebSocketClient {
        try await WebSocketClient.connect(
            port: port, path: "/chat", subprotocols: ["chat.v1"], headers: id.map { [("X-Kakapo-Session", $0)] } ?? [])
    }

    /// The opening of a chat with `WebSocketChatServer`: its greeting, then `hello` answered with text and binary.
    static func greetAndHello(_ client: WebSocketClient) async throws {
        #expect(client.handshake.status == 101, "\(client.handshake.head) \(client.handshake.body)")
        #expect(client.handshake.subprotocol == "chat.v1")
        #expect(try #require(await client.nextMessage()).text == #"{"type":"welcome"}"#)
        try client.send(text: "hello")
        #expect(try #require(await client.nextMessage()).text == "hi there")
        #expect(try #require(await client.nextMessage()).payload == .binary([0, 1, 2, 255]))
    }

    @Test(
        "a conversation in a session is recorded into its cassette; ending the session while it is open records it as it stands; the next session replays it"
    )
    func recordEndWhileOpenReplay() async throws {
        let directory = try Fixtures.temporaryDirectory()
        let upstream = try await WebSocketChatServer.start()
        let proxy = try await Self.server(directory, upstream: upstream.baseURL)
        let recorder = try await SessionTests.open(proxy.port, #"{"cassette": "ws/chat.json", "mode": "new"}"#)

        // One whole conversation, then a second left open when the session ends.
        let whole = try await Self.connect(proxy.port, session: recorder)
        try await Self.greetAndHello(whole)
        try whole.send(text: "bye")
        #expect(try #require(await whole.closeFrame()).code == 1000)
        try whole.close(code: 1000)
        #expect(await whole.waitForDisconnect())
        let open = try await Self.connect(proxy.port, session: recorder)
        defer { open.disconnect() }
        try await Self.greetAndHello(open)

        let started = ContinuousClock.now
        let ended = try await SessionTests.admin(proxy.port, "DELETE", "/__kakapo/sessions/\(recorder)")
        #expect(ended.status == 200, "\(ended.json)")
        #expect(ended.json["recorded"] as? Int == 2, "\(ended.json)")
        // The open conversation does not hold the DELETE for the 10 seconds requests in flight may take.
        #expect(ContinuousClock.now - started < .seconds(5))
        await upstream.stop()

        let file = try CassetteFile.load(directory + "/ws/chat.json")
        let conversations = file.interactions.map(\.webSocket)
        #expect(file.interactions.map(\.request.target) == ["/chat", "/chat"])
        #expect(
            file.interactions.allSatisfy { !$0.request.headers.contains { $0.name.lowercased() == "x-kakapo-session" } }
        )
        let first = try #require(conversations.first ?? nil)
        let second = try #require(conversations.last ?? nil)
        #expect(first.messages.map(\.payload).last == .text("bye"))
        #expect(first.close?.code == 1000)
        #expect(
            second.messages.map(\.payload) == [
                .text(#"{"type":"welcome"}"#), .text("hello"), .text("hi there"), .binary([0, 1, 2, 255]),
            ])
        #expect(second.close == nil)

        // The next session replays both, in order, with the upstream stopped.
        let player = try await SessionTests.open(proxy.port, #"{"cassette": "ws/chat.json", "mode": "none"}"#)
        let again = try await Self.connect(proxy.port, session: player)
        try await Self.greetAndHello(again)
        try again.send(text: "bye")
        let close = try #require(await again.closeFrame())
        #expect(close.code == 1000)
        #expect(close.reason == "done")
        try again.close(code: 1000)
        #expect(await again.waitForDisconnect())
        let reopened = try await Self.connect(proxy.port, session: player)
        defer { reopened.disconnect() }
        try await Self.greetAndHello(reopened)
        // Recorded without a close: the replay stays open, silent.
        #expect(await reopened.nextMessage(timeout: .milliseconds(300)) == nil)
        #expect(reopened.isConnected)
        let summary = try await SessionTests.admin(proxy.port, "DELETE", "/__kakapo/sessions/\(player)")
        #expect(summary.json["replayed"] as? Int == 2, "\(summary.json)")
        #expect((summary.json["misses"] as? [Any])?.isEmpty ?? true, "\(summary.json)")
        await proxy.stop()
    }

    @Test(
        "in a replaying session a mismatched client message closes 1008 and is in the session's misses; an ended session's id is refused 404"
    )
    func missAndEndedSession() async throws {
        let directory = try Fixtures.temporaryDirectory()
        let upstream = try await WebSocketChatServer.start()
        let proxy = try await Self.server(directory, upstream: upstream.baseURL)
        let recorder = try await SessionTests.open(proxy.port, #"{"cassette": "miss.json", "mode": "new"}"#)
        let recording = try await Self.connect(proxy.port, session: recorder)
        try await Self.greetAndHello(recording)
        recording.disconnect()
        #expect(await recording.waitForDisconnect())
        _ = try await SessionTests.admin(proxy.port, "DELETE", "/__kakapo/sessions/\(recorder)")
        await upstream.stop()

        // The ended session is gone: its id is refused, never answered from another cassette.
        let stale = try await Self.connect(proxy.port, session: recorder)
        #expect(stale.handshake.status == 404)
        #expect(stale.handshake.body.contains(recorder), "\(stale.handshake.body)")

        let player = try await SessionTests.open(
            proxy.port, #"{"cassette": "miss.json", "mode": "none", "strict": true}"#)
        let client = try await Self.connect(proxy.port, session: player)
        defer { client.disconnect() }
        #expect(try #require(await client.nextMessage()).text == #"{"type":"welcome"}"#)
        try client.send(text: "goodbye")
        let close = try #require(await client.closeFrame())
        #expect(close.code == 1008)
        #expect(close.reason.contains("hello"), "\(close.reason)")
        let summary = try await SessionTests.admin(proxy.port, "DELETE", "/__kakapo/sessions/\(player)")
        // Kakapo's own summary counts the miss (the journal is shared by every session)...
        #expect(proxy.server.engine.summary().misses.contains { $0.contains("/chat") })
        // ...but the session's does not yet: WebSocketServing reports a message miss to the pipeline with the
        // request alone, whose session header SessionLayer has taken out, so TestSession.noteMiss never hears
        // of it. When that is fixed, this known issue stops occurring and Swift Testing says so.
        withKnownIssue("a WebSocket message miss is not in its session's summary") {
            let misses = summary.json["misses"] as? [[String: Any]] ?? []
            #expect(misses.count == 1, "\(summary.json)")
            #expect(misses.first?["url"] as? String == "/chat", "\(summary.json)")
        }
        #expect(summary.json["strict"] as? Bool == true)
        await proxy.stop()
    }
}
