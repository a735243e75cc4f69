import Foundation
import Kakapo
import KakapoTestSupport
import KakapoTesting
import Synchronization
import Testing

/// WebSocket conversations in a Swift test's own cassette: Kakapo in process (URLSession through
/// `KakapoURLProtocol`) cannot carry an upgrade, so the test's client talks to the cassette's socket server,
/// `CassetteContext.current!.baseURL()`, which answers through the same pipeline and the same cassette.
@Suite("WebSocket conversations through the cassette trait")
struct WebSocketCassetteTraitTests {
    /// Runs `body` inside `trait` as Swift Testing would around a test carrying it, so one test can record
    /// with a trait in one mode and replay with the same trait in another (an upstream on port 0 cannot be
    /// named in an attribute).
    static func within(_ trait: CassetteTrait, _ body: @Sendable () async throws -> Void) async throws {
        let test = try #require(Test.current)
        try await trait.provideScope(for: test, testCase: Test.Case.current, performing: body)
    }

    /// The client's side of a chat with `WebSocketChatServer` at the cassette's socket server, as a
    /// transcript: the greeting, `hello` answered with text and binary, `bye` answered with the server's
    /// close, which the client answers.
    static func chat() async throws -> [String] {
        let cassette = try #require(CassetteContext.current)
        let base = try await cassette.baseURL()
        // The socket server speaks plain HTTP; a WebSocket client addresses it as ws:// on the same port.
        var components = try #require(URLComponents(url: base, resolvingAgainstBaseURL: false))
        components.scheme = "ws"
        components.path = "/chat"
        let url = try #require(components.url)
        let client = try await WebSocketClient.connect(
            host: try #require(url.host), port: try #require(url.port), path: url.path, subprotocols: ["chat.v1"])
        defer { client.disconnect() }
        var transcript = ["\(client.handshake.status) \(client.handshake.subprotocol ?? "-")"]
        func next() async throws {
            let message = try #require(await client.nextMessage(), "after \(transcript)")
            switch message.payload {
            case .text(let text): transcript.append("<- \(text)")
            case .binary(let bytes): transcript.append("<- bytes \(bytes)")
            }
        }
        try await next()
        try client.send(text: "hello")
        transcript.append("-> hello")
        try await next()
        try await next()
        try client.send(text: "bye")
        transcript.append("-> bye")
        let close = try #require(await client.closeFrame(), "after \(transcript)")
        transcript.append("<- close \(close.code.map(String.init) ?? "-") \(close.reason)")
        try client.close(code: 1000)
        #expect(await client.waitForDisconnect(), "the connection stays open after both closes")
        return transcript
    }

    static let expected = [
        "101 chat.v1", #"<- {"type":"welcome"}"#, "-> hello", "<- hi there", "<- bytes [0, 1, 2, 255]", "-> bye",
        "<- close 1000 done",
    ]

    @Test(
        "a conversation through baseURL() is recorded with the trait in record mode and replayed with the upstream stopped"
    )
    func recordThenReplay() async throws {
        let directory = try Fixtures.temporaryDirectory()
        let upstream = try await WebSocketChatServer.start()
        let recorded = Mutex<[String]>([])
        try await Self.within(.cassette("Chat/conversation", in: directory, upstream: upstream.baseURL, mode: .new)) {
            let cassette = try #require(CassetteContext.current)
            #expect(cassette.mode == .new)
            let transcript = try await Self.chat()
            recorded.withLock { $0 = transcript }
        }
        await upstream.stop()
        #expect(recorded.withLock { $0 } == Self.expected)

        // What the cassette holds: the upgrade and, beside it, the whole conversation with its close.
        let file = try CassetteFile.load(directory + "/Chat/conversation.json")
        #expect(file.interactions.count == 1)
        let interaction = try #require(file.interactions.first)
        #expect(interaction.request.target == "/chat")
        #expect(interaction.response.status == 101)
        let conversation = try #require(interaction.webSocket)
        #expect(conversation.subprotocol == "chat.v1")
        #expect(conversation.messages.map(\.from) == [.server, .client, .server, .server, .client])
        #expect(
            conversation.messages.map(\.payload) == [
                .text(#"{"type":"welcome"}"#), .text("hello"), .text("hi there"), .binary([0, 1, 2, 255]), .text("bye"),
            ])
        #expect(conversation.close?.from == .server)
        #expect(conversation.close?.code == 1000)
        #expect(conversation.close?.reason == "done")

        // Replay: no upstream at all, and the same test body hears the same conversation.
        let replayed = Mutex<[String]>([])
        try await Self.within(.cassette("Chat/conversation", in: directory, mode: .replay)) {
            let transcript = try await Self.chat()
            replayed.withLock { $0 = transcript }
        }
        #expect(replayed.withLock { $0 } == Self.expected)

        // A client message the recording does not have closes 1008 and fails the test, naming the miss.
        do {
            try await Self.within(.cassette("Chat/conversation", in: directory, mode: .replay)) {
                let port = try #require(try await CassetteContext.current?.baseURL().port)
                let client = try await WebSocketClient.connect(port: port, path: "/chat", subprotocols: ["chat.v1"])
                defer { client.disconnect() }
                #expect(try #require(await client.nextMessage()).text == #"{"type":"welcome"}"#)
                try client.send(text: "goodbye")
                let close = try #require(await client.closeFrame())
                #expect(close.code == 1008)
                #expect(close.reason.contains("hello"), "\(close.reason)")
            }
            Issue.record("a client message the recording does not have did not fail the test")
        } catch let error as CassetteTestError {
            #expect(error.description.contains("1 request(s) matched no recording"), "\(error)")
            // The summary names the upgrade; which message differed is in the 1008 reason and Kakapo's log.
            #expect(error.description.contains("miss: GET /chat"), "\(error)")
        }
    }

    @Test("a conversation still open when the test ends is recorded as it stands, and its replay stays open after it")
    func openWhenTheTestEnds() async throws {
        let directory = try Fixtures.temporaryDirectory()
        let upstream = try await WebSocketChatServer.start()
        // The client outlives the test body: the cassette is saved while the conversation is still open.
        let left = Mutex<WebSocketClient?>(nil)
        try await Self.within(.cassette("open", in: directory, upstream: upstream.baseURL, mode: .new)) {
            let port = try #require(try await CassetteContext.current?.baseURL().port)
            let client = try await WebSocketClient.connect(port: port, path: "/chat")
            left.withLock { $0 = client }
            #expect(try #require(await client.nextMessage()).text == #"{"type":"welcome"}"#)
            try client.send(text: "hello")
            #expect(try #require(await client.nextMessage()).text == "hi there")
            #expect(try #require(await client.nextMessage()).payload == .binary([0, 1, 2, 255]))
        }
        left.withLock { $0 }?.disconnect()
        await upstream.stop()
        let conversation = try #require(try CassetteFile.load(directory + "/open.json").interactions.first?.webSocket)
        #expect(
            conversation.messages.map(\.payload) == [
                .text(#"{"type":"welcome"}"#), .text("hello"), .text("hi there"), .binary([0, 1, 2, 255]),
            ])
        #expect(conversation.close == nil)

        try await Self.within(.cassette("open", in: directory, mode: .replay)) {
            let port = try #require(try await CassetteContext.current?.baseURL().port)
            let client = try await WebSocketClient.connect(port: port, path: "/chat")
            defer { client.disconnect() }
            #expect(try #require(await client.nextMessage()).text == #"{"type":"welcome"}"#)
            try client.send(text: "hello")
            #expect(try #require(await client.nextMessage()).text == "hi there")
            #expect(try #require(await client.nextMessage()).payload == .binary([0, 1, 2, 255]))
            // No close was recorded: the replay says nothing more and keeps the connection.
            #expect(await client.nextMessage(timeout: .milliseconds(300)) == nil)
            #expect(client.isConnected)
        }
    }
}

/// The trait as a user writes it, with a conversation committed beside the tests
/// (`Fixtures/cassettes/WebSocketTraitTests/...`): replayed in every mode but `all` and `new` (`once` finds
/// the file, and `CI` never records).
@Suite(
    "WebSocket conversation from a committed cassette", .cassette(in: "Tests/KakapoURLSessionTests/Fixtures/cassettes"))
struct WebSocketTraitTests {
    @Test(
        "the test's cassette plays its conversation through baseURL(): JSON-matched, at the recorded pace, closed as recorded"
    )
    func replaysAConversation() async throws {
        let cassette = try #require(CassetteContext.current)
        #expect(cassette.path.hasSuffix("cassettes/WebSocketTraitTests/replaysAConversation.json"))
        let port = try #require(try await cassette.baseURL().port)
        let client = try await WebSocketClient.connect(port: port, path: "/prices", subprotocols: ["prices.v1"])
        defer { client.disconnect() }
        #expect(client.handshake.status == 101, "\(client.handshake.head)")
        #expect(client.handshake.subprotocol == "prices.v1")
        #expect(try #require(await client.nextMessage()).text == #"{"type":"ready"}"#)
        // Matched as JSON: the members in another order are the recorded message.
        let sent = ContinuousClock.now
        try client.send(text: #"{"symbols": ["KEA"], "op": "subscribe"}"#)
        let first = try #require(await client.nextMessage())
        #expect(first.text == #"{"symbol":"KEA","price":101.5}"#)
        let second = try #require(await client.nextMessage())
        #expect(second.text == #"{"symbol":"KEA","price":101.75}"#)
        #expect(try #require(await client.nextMessage()).payload == .binary([0, 1, 2, 255]))
        // Recorded 200 ms after the subscription: never sooner, and a loaded machine has room above.
        let waited = (second.arrived - sent) / .milliseconds(1)
        #expect(waited >= 195 && waited < 2000, "\(waited) ms")
        let close = try #require(await client.closeFrame())
        #expect(close.code == 1000)
        #expect(close.reason == "market closed")
        try client.close(code: 1000)
        #expect(await client.waitForDisconnect())
    }
}
