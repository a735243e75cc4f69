import Foundation
import Kakapo
import KakapoTestSupport
import Testing

/// Recorded WebSocket conversations played back by Kakapo with no upstream, through real sockets: a real
/// NIO client (`WebSocketClient`) against the real server.
@Suite("WebSocket replay")
struct WebSocketReplayTests {
    /// A cassette file holding one upgrade interaction per conversation (each a `"websocket"` object's JSON),
    /// all on `path`.
    static func cassette(_ conversations: [String], path: String = "/chat") throws -> String {
        let interactions = conversations.map { websocket in
            """
            {"request": {"method": "GET", "url": "\(path)", "headers": [["Upgrade", "websocket"], ["Connection", "Upgrade"]]},
             "response": {"status": 101, "headers": []}, "websocket": \(websocket)}
            """
        }
        let file = try Fixtures.temporaryDirectory() + "/ws.json"
        try #"{"version": 1, "interactions": [\#(interactions.joined(separator: ",\n"))]}"#
            .write(toFile: file, atomically: true, encoding: .utf8)
        return file
    }

    static func replaying(
        _ conversations: [String], timing: StreamTiming = .recorded, matching: MatchOptions = MatchOptions(),
        idleTimeout: Double = 60
    ) async throws -> ProxyHarness {
        var configuration = ProxyConfiguration(
            mode: .replay, cassettePath: try cassette(conversations), idleTimeout: idleTimeout)
        configuration.streamTiming = timing
        configuration.matching = matching
        return try await ProxyHarness.start(configuration)
    }

    /// Milliseconds from `start` to `end`.
    static func milliseconds(_ start: ContinuousClock.Instant, _ end: ContinuousClock.Instant) -> Double {
        (end - start) / .milliseconds(1)
    }

    static let textAndBinary = """
        {"subprotocol": "chat", "messages": [
          {"from": "server", "offsetMs": 0, "text": "hi"},
          {"from": "client", "offsetMs": 100, "text": "hello"},
          {"from": "server", "offsetMs": 400, "text": "world"},
          {"from": "server", "offsetMs": 500, "base64": "AAEC/w=="}],
         "close": {"from": "server", "code": 1000, "reason": "bye", "offsetMs": 550}}
        """

    @Test("a text and binary conversation is replayed with no upstream, at the recorded pace, and closed as recorded")
    func textAndBinary() async throws {
        let harness = try await Self.replaying([Self.textAndBinary])
        let client = try await WebSocketClient.connect(port: harness.port, path: "/chat", subprotocols: ["chat"])
        #expect(client.handshake.status == 101, "\(client.handshake.head)")
        #expect(client.handshake.subprotocol == "chat")
        #expect(client.handshake.values("Sec-WebSocket-Extensions").isEmpty)
        let hi = try #require(await client.nextMessage())
        #expect(hi.text == "hi")
        // Loose: a loaded 2-core CI machine running the whole suite stretches the first message by seconds.
        #expect(Self.milliseconds(client.opened, hi.arrived) < 8000)
        // Nothing more until the client speaks.
        #expect(await client.nextMessage(timeout: .milliseconds(300)) == nil)
        let sent = ContinuousClock.now
        try client.send(text: "hello")
        let world = try #require(await client.nextMessage())
        #expect(world.text == "world")
        let binary = try #require(await client.nextMessage())
        #expect(binary.payload == .binary([0, 1, 2, 255]))
        let close = try #require(await client.closeFrame())
        #expect(close.code == 1000)
        #expect(close.reason == "bye")
        // Offsets from the client's message: 300 ms and 400 ms; the lower bounds are strict, the upper ones
        // leave a loaded machine room.
        #expect(Self.milliseconds(sent, world.arrived) >= 300)
        #expect(Self.milliseconds(sent, world.arrived) < 1500)
        #expect(Self.milliseconds(sent, binary.arrived) >= 400)
        #expect(Self.milliseconds(sent, binary.arrived) < 1600)
        try client.close(code: 1000)
        #expect(await client.waitForDisconnect())
        let summary = await harness.stop()
        #expect(summary.counts[.miss, default: 0] == 0)
        #expect(summary.counts[.cassette, default: 0] == 1)
    }

    static let slow = """
        {"messages": [
          {"from": "client", "offsetMs": 0, "text": "go"},
          {"from": "server", "offsetMs": 1600, "text": "one"},
          {"from": "server", "offsetMs": 2000, "text": "two"}]}
        """

    @Test("--stream-timing none sends the server's messages at once, 4x four times as fast")
    func streamTiming() async throws {
        for (timing, lower, upper) in [(StreamTiming.none, 0.0, 1000.0), (StreamTiming("4x")!, 400.0, 1200.0)] {
            let harness = try await Self.replaying([Self.slow], timing: timing)
            let client = try await WebSocketClient.connect(port: harness.port, path: "/chat")
            let sent = ContinuousClock.now
            try client.send(text: "go")
            let one = try #require(await client.nextMessage())
            let two = try #require(await client.nextMessage())
            #expect([one.text, two.text] == ["one", "two"])
            let first = Self.milliseconds(sent, one.arrived)
            #expect(first >= lower && first < upper, "\(timing): \(first) ms")
            if timing == StreamTiming("4x")! {
                #expect(Self.milliseconds(sent, two.arrived) >= 500, "\(timing)")
            }
            // No close recorded: the connection stays open, silent.
            #expect(await client.nextMessage(timeout: .milliseconds(300)) == nil)
            #expect(client.isConnected)
            client.disconnect()
            await harness.stop()
        }
    }

    @Test(
        "a client message matches as JSON: key order, number spelling, --ignore-body-field and [REDACTED] do not count")
    func jsonMatching() async throws {
        let recorded = #"{"b": 1, "a": [1.0, 2], "ts": 123, "token": "[REDACTED]"}"#
        let conversation = """
            {"messages": [{"from": "client", "offsetMs": 0, "text": \(jsonString(recorded))},
              {"from": "server", "offsetMs": 5, "text": "ok"}]}
            """
        let harness = try await Self.replaying(
            [conversation], matching: MatchOptions(ignoredBodyFields: [JSONPointer("/ts")!]))
        let client = try await WebSocketClient.connect(port: harness.port, path: "/chat")
        try client.send(text: #"{"token":"s3cret","a":[1,2e0],"ts":999,"b":1}"#)
        #expect(await client.nextMessage()?.text == "ok")
        client.disconnect()
        let summary = await harness.stop()
        #expect(summary.counts[.miss, default: 0] == 0)
    }

    @Test(
        "a client message that differs closes the connection with 1008, the message's index and the first difference, and counts as a miss"
    )
    func mismatch() async throws {
        let conversation = """
            {"messages": [{"from": "client", "offsetMs": 0, "text": "subscribe"},
              {"from": "client", "offsetMs": 10, "text": "{\\"price\\": 11, \\"symbol\\": \\"KKP\\"}"},
              {"from": "server", "offsetMs": 20, "text": "filled"}]}
            """
        let harness = try await Self.replaying([conversation])
        let client = try await WebSocketClient.connect(port: harness.port, path: "/chat")
        try client.send(text: "subscribe")
        try client.send(text: #"{"symbol": "KKP", "price": 12}"#)
        let close = try #require(await client.closeFrame())
        #expect(close.code == 1008)
        #expect(close.reason == "message 2 from the client differs at /price: 12 here, 11 recorded")
        #expect(await client.nextMessage(timeout: .milliseconds(100)) == nil)
        try? client.close(code: 1000)
        #expect(await client.waitForDisconnect())
        let summary = await harness.stop()
        #expect(summary.counts[.miss, default: 0] == 1)
        #expect(summary.misses.contains { $0.hasPrefix("GET /chat") })
    }

    @Test(
        "a client that runs ahead is matched with the next client message; the server messages scheduled before go first"
    )
    func clientRunsAhead() async throws {
        let harness = try await Self.replaying([
            """
            {"messages": [{"from": "client", "offsetMs": 0, "text": "a"}, {"from": "server", "offsetMs": 300, "text": "x"},
              {"from": "client", "offsetMs": 400, "text": "b"}, {"from": "server", "offsetMs": 410, "text": "y"}]}
            """
        ])
        let client = try await WebSocketClient.connect(port: harness.port, path: "/chat")
        let sent = ContinuousClock.now
        try client.send(text: "a")
        try client.send(text: "b")
        let x = try #require(await client.nextMessage())
        let y = try #require(await client.nextMessage())
        #expect([x.text, y.text] == ["x", "y"])
        #expect(Self.milliseconds(sent, x.arrived) >= 300)
        #expect(y.arrived >= x.arrived)
        client.disconnect()
        let summary = await harness.stop()
        #expect(summary.counts[.miss, default: 0] == 0)
    }

    @Test("a client message past the recording's last closes 1008 saying so; a long difference is cut to 123 bytes")
    func beyondTheRecording() async throws {
        let long = String(repeating: "é", count: 200)
        let harness = try await Self.replaying([
            #"{"messages": [{"from": "client", "offsetMs": 0, "text": "a"}]}"#,
            #"{"messages": [{"from": "client", "offsetMs": 0, "text": "x\#(long)"}]}"#,
        ])
        let client = try await WebSocketClient.connect(port: harness.port, path: "/chat")
        try client.send(text: "a")
        try client.send(text: "b")
        let close = try #require(await client.closeFrame())
        #expect(close.code == 1008)
        #expect(
            close.reason
                == "message 2 from the client is one more than recorded: the recording has 1 message from the client")
        client.disconnect()

        let second = try await WebSocketClient.connect(port: harness.port, path: "/chat")
        try second.send(text: "y" + long)
        let cut = try #require(await second.closeFrame())
        #expect(cut.code == 1008)
        #expect(cut.reason.utf8.count <= 123 && cut.reason.utf8.count > 100)
        #expect(cut.reason.hasPrefix("message 1 from the client differs at character 0: \"y"))
        second.disconnect()
        let summary = await harness.stop()
        #expect(summary.counts[.miss, default: 0] == 2)
    }

    @Test("the recorded subprotocol is answered when the client offers it, none when it offers others or none")
    func subprotocols() async throws {
        let harness = try await Self.replaying(
            Array(repeating: #"{"subprotocol": "chat", "messages": []}"#, count: 3))
        let offered = try await WebSocketClient.connect(
            port: harness.port, path: "/chat", subprotocols: ["superchat", "chat"])
        #expect(offered.handshake.status == 101)
        #expect(offered.handshake.subprotocol == "chat")
        let others = try await WebSocketClient.connect(port: harness.port, path: "/chat", subprotocols: ["other"])
        #expect(others.handshake.status == 101)
        #expect(others.handshake.subprotocol == nil)
        let none = try await WebSocketClient.connect(port: harness.port, path: "/chat")
        #expect(none.handshake.subprotocol == nil)
        for client in [offered, others, none] { client.disconnect() }
        await harness.stop()
    }

    @Test("a ping is answered with a pong carrying its data; fragments are joined into one message")
    func pingAndFragments() async throws {
        let harness = try await Self.replaying([
            #"{"messages": [{"from": "client", "offsetMs": 0, "text": "hello"}, {"from": "server", "offsetMs": 1, "text": "joined"}]}"#
        ])
        let client = try await WebSocketClient.connect(port: harness.port, path: "/chat")
        try client.ping([7, 8, 9])
        #expect(await client.nextPong() == [7, 8, 9])
        try client.sendFrame(fin: false, opcode: 0x1, payload: Array("hel".utf8))
        // A ping may come between the fragments of a message.
        try client.ping([1])
        try client.sendFrame(fin: true, opcode: 0x0, payload: Array("lo".utf8))
        #expect(await client.nextMessage()?.text == "joined")
        client.disconnect()
        await harness.stop()
    }

    /// `count` masked continuation frames of `payload` (at most 125 bytes; a zero mask, so the bytes go as they
    /// are), the last one final: written in place, since a frame each through `sendFrame` (or appending
    /// arrays in a debug build) would cost more than the server.
    static func continuations(_ count: Int, payload: [UInt8]) -> [UInt8] {
        let size = 6 + payload.count
        return [UInt8](unsafeUninitializedCapacity: count * size) { buffer, initialized in
            var at = 0
            for index in 0..<count {
                buffer[at] = index == count - 1 ? 0x80 : 0x00
                buffer[at + 1] = 0x80 | UInt8(payload.count)
                for offset in 2..<6 { buffer[at + offset] = 0 }
                for (offset, byte) in payload.enumerated() { buffer[at + 6 + offset] = byte }
                at += size
            }
            initialized = count * size
        }
    }

    @Test(
        "joining a message costs linear time in its fragments: a 4 MB first fragment and 200,000 one-byte or empty continuations are answered well within a bound that only guards against a hang"
    )
    func fragmentFlood() async throws {
        // Each joined message is recorded as the client's, so the conversation answers once it is whole. The
        // old join copied the message so far for every fragment: 200,000 copies of 4 MB (800 GB) each.
        let large = 4 << 20
        let count = 200_000
        let harness = try await Self.replaying(
            [
                #"{"messages": [{"from": "client", "offsetMs": 0, "text": "\#(String(repeating: "a", count: large + count))"}, {"from": "server", "offsetMs": 1, "text": "joined"}]}"#,
                #"{"messages": [{"from": "client", "offsetMs": 0, "base64": "\#(Data(repeating: 98, count: large).base64EncodedString())"}, {"from": "server", "offsetMs": 1, "text": "joined too"}]}"#,
            ], timing: .none)
        for (opcode, payload, answer) in [(UInt8(0x1), [UInt8(ascii: "a")], "joined"), (0x2, [], "joined too")] {
            let client = try await WebSocketClient.connect(port: harness.port, path: "/chat")
            let first: UInt8 = opcode == 0x1 ? UInt8(ascii: "a") : UInt8(ascii: "b")
            try client.sendFrame(fin: false, opcode: opcode, payload: Array(repeating: first, count: large))
            try client.sendRaw(Self.continuations(count, payload: payload))
            #expect(await client.nextMessage(timeout: .seconds(60))?.text == answer)
            client.disconnect()
        }
        await harness.stop()
    }

    @Test("two recordings of one path replay in order on two connections")
    func twoRecordingsInOrder() async throws {
        let harness = try await Self.replaying([
            #"{"messages": [{"from": "server", "offsetMs": 0, "text": "first"}]}"#,
            #"{"messages": [{"from": "server", "offsetMs": 0, "text": "second"}]}"#,
        ])
        let one = try await WebSocketClient.connect(port: harness.port, path: "/chat")
        #expect(await one.nextMessage()?.text == "first")
        let two = try await WebSocketClient.connect(port: harness.port, path: "/chat")
        #expect(await two.nextMessage()?.text == "second")
        one.disconnect()
        two.disconnect()
        await harness.stop()
    }

    @Test("a plain GET of a conversation's URL gets 426; a handshake without a key or with another version gets 400")
    func notAWebSocket() async throws {
        let harness = try await Self.replaying(Array(repeating: #"{"messages": []}"#, count: 3))
        let plain = try await harness.client.send(.get, "/chat")
        #expect(plain.status == 426)
        #expect(String(decoding: plain.body, as: UTF8.self).contains("WebSocket"))
        for (field, expected) in [
            ("Sec-WebSocket-Key: short\r\nSec-WebSocket-Version: 13", "Sec-WebSocket-Key"),
            ("Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 8", "Sec-WebSocket-Version: 13"),
        ] {
            let connection = try RawConnection(port: harness.port)
            connection.send(
                "GET /chat HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\(field)\r\n\r\n"
            )
            let (text, _) = connection.receive { $0.contains("}") }
            #expect(text.hasPrefix("HTTP/1.1 400"), "\(text)")
            #expect(text.contains(expected), "\(text)")
        }
        await harness.stop()
    }

    @Test("JSON-RPC responses get the id the client used when it differs from the recorded one")
    func jsonRPCIDs() async throws {
        let request = #"{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}"#
        let response = #"{"jsonrpc": "2.0", "id": 1, "result": {"tools": []}}"#
        let harness = try await Self.replaying([
            """
            {"messages": [{"from": "client", "offsetMs": 0, "text": \(jsonString(request))},
              {"from": "server", "offsetMs": 1, "text": \(jsonString(response))}]}
            """
        ])
        let client = try await WebSocketClient.connect(port: harness.port, path: "/chat")
        try client.send(text: #"{"jsonrpc":"2.0","method":"tools/list","id":"abc-7"}"#)
        let reply = try #require(await client.nextMessage()?.text)
        #expect(reply == #"{"jsonrpc": "2.0", "id": "abc-7", "result": {"tools": []}}"#)
        client.disconnect()
        await harness.stop()
    }

    @Test("a close the client sent in the recording is waited for and echoed")
    func clientClose() async throws {
        let harness = try await Self.replaying([
            #"{"messages": [{"from": "server", "offsetMs": 0, "text": "hi"}], "close": {"from": "client", "code": 1000, "reason": "done"}}"#
        ])
        let client = try await WebSocketClient.connect(port: harness.port, path: "/chat")
        #expect(await client.nextMessage()?.text == "hi")
        #expect(await client.closeFrame(timeout: .milliseconds(300)) == nil)
        #expect(client.isConnected)
        try client.close(code: 4001, reason: "bye now")
        let echo = try #require(await client.closeFrame())
        #expect(echo.code == 4001)
        #expect(await client.waitForDisconnect())
        await harness.stop()
    }

    @Test("a conversation that ends without a close stays open, silent, until the idle timeout closes it with 1001")
    func idleTimeout() async throws {
        let harness = try await Self.replaying(
            [#"{"messages": [{"from": "server", "offsetMs": 0, "text": "only"}]}"#], idleTimeout: 5)
        let client = try await WebSocketClient.connect(port: harness.port, path: "/chat")
        let opened = ContinuousClock.now
        #expect(await client.nextMessage()?.text == "only")
        // A ping is activity: the idle time counts from it. On a machine so loaded that the sleep ran past
        // most of the idle timeout, the ping may find the connection closed: then only the close is judged.
        // (The timeout is 5 s, not less: a loaded CI machine has starved a test for 2 s between its connect
        // and its handshake, and the server rightly closed that idle connection.)
        try await Task.sleep(for: .milliseconds(1500))
        var pinged: ContinuousClock.Instant?
        if ContinuousClock.now - opened < .milliseconds(3500), (try? client.ping()) != nil {
            pinged = ContinuousClock.now
        }
        let close = try #require(await client.closeFrame(timeout: .seconds(15)))
        #expect(close.code == 1001)
        let closed = try #require(
            client.events.last.flatMap { event -> ContinuousClock.Instant? in
                if case .close(_, _, let arrived) = event { return arrived }
                return nil
            })
        // The server's timer starts when it has written the handshake, a little before the client reads it.
        #expect(closed - opened >= .milliseconds(4_500))
        if let pinged { #expect(closed - pinged >= .milliseconds(4_500), "the ping did not count as activity") }
        #expect(await client.waitForDisconnect())
        await harness.stop()
    }

    @Test(
        "hostile frames (unmasked, too big, unknown opcode, reserved bits, bad UTF-8) close cleanly and the server stays up"
    )
    func hostileFrames() async throws {
        let harness = try await Self.replaying(Array(repeating: #"{"messages": []}"#, count: 6))
        var oversized: [UInt8] = [0x82, 0x80 | 127]
        oversized += [0, 0, 1, 0, 0, 0, 0, 0] + [1, 2, 3, 4]
        let cases: [(String, [UInt8], Int)] = [
            ("unmasked", WebSocketClient.frame(opcode: 0x1, payload: Array("x".utf8), masked: false), 1002),
            ("oversized", oversized, 1009),
            ("opcode 3", WebSocketClient.frame(opcode: 0x3, payload: []), 1002),
            ("rsv1", WebSocketClient.frame(opcode: 0x1, payload: Array("x".utf8), reservedBits: 0x40), 1002),
            ("bad UTF-8", WebSocketClient.frame(opcode: 0x1, payload: [0xC3, 0x28]), 1007),
            ("continuation first", WebSocketClient.frame(opcode: 0x0, payload: [1]), 1002),
        ]
        for (name, bytes, code) in cases {
            let client = try await WebSocketClient.connect(port: harness.port, path: "/chat")
            #expect(client.handshake.status == 101)
            try client.sendRaw(bytes)
            #expect(await client.closeFrame()?.code == code, "\(name)")
            #expect(await client.waitForDisconnect(), "\(name)")
        }
        let plain = try await harness.client.send(.get, "/chat")
        #expect(plain.status == 426)
        await harness.stop()
    }
}

/// `text` as a JSON string literal.
private func jsonString(_ text: String) -> String {
    String(decoding: JSONWriter().write(.string(text)), as: UTF8.self)
}
