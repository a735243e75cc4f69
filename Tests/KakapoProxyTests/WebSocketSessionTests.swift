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
            mode: upstream == nil ? .replay : .new, upstream: upstream.map { UpstreamConfiguration(baseURL: $0) })
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
        #expect(ContinuousClock.now - started < .seconds(8))
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
        // ...and so does the session's.
        let misses = summary.json["misses"] as? [[String: Any]] ?? []
        #expect(misses.count == 1, "\(summary.json)")
        #expect(misses.first?["url"] as? String == "/chat", "\(summary.json)")
        let line = misses.first?["line"] as? String ?? ""
        #expect(line.hasPrefix("GET /chat: WebSocket miss: ") && line.contains("hello"), "\(summary.json)")
        #expect(summary.json["strict"] as? Bool == true)
        await proxy.stop()
    }

    /// Waits until `process` has logged `text` (Kakapo logs to standard error).
    static func waitForLog(_ process: KakapoProcess, _ text: String, timeout: Duration = .seconds(10)) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if process.standardError.contains(text) { return true }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return false
    }

    @Test(
        "through the built kakapo: kill -9 in a session loses no finished conversation, SIGTERM records the open one, and the next server's session replays them"
    )
    func builtBinary() async throws {
        let directory = try Fixtures.temporaryDirectory()
        let upstream = try await WebSocketChatServer.start()
        let arguments = ["serve", "--cassette-dir", directory, "--upstream", upstream.baseURL, "--port", "0"]

        // kill -9 while a second conversation is open: the first, finished, is in the session's journal.
        let killed = try KakapoProcess(arguments)
        var port = try await killed.waitUntilListening()
        var id = try await Self.open(port, #"{"cassette": "killed.json", "mode": "new"}"#)
        let finished = try await Self.connect(port, session: id)
        try await Self.greetAndHello(finished)
        try finished.send(text: "bye")
        #expect(try #require(await finished.closeFrame()).reason == "done")
        try finished.close(code: 1000)
        #expect(await Self.waitForLog(killed, "recorded WebSocket GET /chat: 2 client and 3 server messages"))
        let open = try await Self.connect(port, session: id)
        try await Self.greetAndHello(open)
        killed.send(SIGKILL)
        _ = try await killed.waitForExit()
        open.disconnect()

        // SIGTERM while a conversation is open: the session is saved with it as it stands.
        let stopped = try KakapoProcess(arguments)
        port = try await stopped.waitUntilListening()
        id = try await Self.open(port, #"{"cassette": "stopped.json", "mode": "new"}"#)
        let left = try await Self.connect(port, session: id)
        try await Self.greetAndHello(left)
        stopped.send(SIGTERM)
        #expect(try await stopped.waitForExit() == 0, "\(stopped.standardError)")
        left.disconnect()
        await upstream.stop()
        let stoppedConversation = try #require(
            try CassetteFile.load(directory + "/stopped.json").interactions.first?.webSocket)
        #expect(stoppedConversation.messages.count == 4)
        #expect(stoppedConversation.close == nil)

        // A new server, no upstream: opening the killed session's file folds its journal in, and both replay.
        let player = try KakapoProcess(["serve", "--cassette-dir", directory, "--port", "0"])
        port = try await player.waitUntilListening()
        id = try await Self.open(port, #"{"cassette": "killed.json", "mode": "none"}"#)
        let again = try await Self.connect(port, session: id)
        try await Self.greetAndHello(again)
        try again.send(text: "bye")
        let close = try #require(await again.closeFrame())
        #expect(close.code == 1000)
        #expect(close.reason == "done")
        again.disconnect()
        // Only the finished conversation was kept: the one open at the kill went with the process.
        #expect(try CassetteFile.load(directory + "/killed.json").interactions.count == 1)
        _ = try await SessionTests.admin(port, "DELETE", "/__kakapo/sessions/\(id)")
        id = try await Self.open(port, #"{"cassette": "stopped.json", "mode": "none"}"#)
        let replayedOpen = try await Self.connect(port, session: id)
        try await Self.greetAndHello(replayedOpen)
        #expect(await replayedOpen.nextMessage(timeout: .milliseconds(300)) == nil)
        #expect(replayedOpen.isConnected)
        replayedOpen.disconnect()
        player.send(SIGTERM)
        _ = try await player.waitForExit()
    }

    /// Opens a session on a server at `port` (another process's) and returns its id.
    static func open(_ port: Int, _ body: String) async throws -> String {
        try await SessionTests.open(port, body)
    }
}
