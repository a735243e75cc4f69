import Foundation
import KakapoCassette
import KakapoHTTP
import KakapoTestSupport
import NIOCore
import NIOPosix
import Testing

/// WebSocket conversations recorded through `kakapo record`: real sockets, the built binary, a real
/// upstream (SwiftNIO's WebSocket server, Python's `websockets`, or a hostile raw one).
@Suite("WebSocket recording", .timeLimit(.minutes(2)))
struct WebSocketRecordTests {
    /// Waits until `process` has logged `text` (on standard error).
    static func waitForLog(_ process: KakapoProcess, _ text: String, timeout: Duration = .seconds(10)) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if process.standardError.contains(text) { return true }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return false
    }

    /// Upgrades `path` on a raw connection, sends one masked text frame and returns the answer's head and
    /// what came after it (the raw bytes as text) until `still-here` or the end.
    static func rawConversation(port: Int, path: String) async -> (head: String, after: String) {
        await withCheckedContinuation { continuation in
            Thread {
                guard let connection = try? RawConnection(port: port, timeout: 5) else {
                    continuation.resume(returning: ("", ""))
                    return
                }
                connection.send(
                    "GET \(path) HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                        + "Sec-WebSocket-Key: \(WebSocketConversation.key)\r\nSec-WebSocket-Version: 13\r\n\r\n")
                let (head, _) = connection.receiveHead()
                connection.send(bytes: WebSocketConversation.maskedTextFrame("are you there"))
                let (after, _) = connection.receive { $0.contains("still-here") }
                connection.closeNow()
                continuation.resume(returning: (head, after))
            }.start()
        }
    }

    @Test(
        "a text and binary conversation is recorded whole: messages in order with their offsets, fragments joined, pings left out, the subprotocol and the close"
    )
    func textAndBinary() async throws {
        let server = try await WebSocketChatServer.start()
        let cassette = try Fixtures.temporaryDirectory() + "/chat.json"
        let recorder = try KakapoProcess([
            "record", "--upstream", server.baseURL, "--cassette", cassette, "--port", "0",
        ])
        let port = try await recorder.waitUntilListening()
        let client = try await WebSocketClient.connect(port: port, path: "/chat?room=1", subprotocols: ["chat.v1"])
        #expect(client.handshake.status == 101)
        #expect(client.handshake.subprotocol == "chat.v1")
        #expect(await client.nextMessage()?.text == #"{"type":"welcome"}"#)
        try client.send(text: "hello")
        #expect(await client.nextMessage()?.text == "hi there")
        #expect(await client.nextMessage()?.payload == .binary([0, 1, 2, 255]))
        try client.ping([1, 2])
        #expect(await client.nextPong() == [1, 2])
        // A client message in two frames, with a ping between them.
        try client.sendFrame(fin: false, opcode: 0x2, payload: [9, 8])
        try client.ping()
        try client.sendFrame(fin: true, opcode: 0x0, payload: [7])
        #expect(await client.nextMessage()?.payload == .binary([9, 8, 7]))
        try client.send(text: "fragments")
        #expect(await client.nextMessage()?.text == "fragmented")
        try client.send(text: "bye")
        let close = await client.closeFrame()
        #expect(close?.code == 1000 && close?.reason == "done")
        try client.close(code: 1000)
        // Recorded as soon as both closes passed, before the connection or Kakapo ends.
        let line = "recorded WebSocket GET /chat?room=1: 4 client and 5 server messages, closed 1000 by the server"
        #expect(await Self.waitForLog(recorder, line), "\(recorder.standardError)")
        recorder.send(SIGINT)
        #expect(try await recorder.waitForExit() == 0)
        await server.stop()

        let interactions = try CassetteFile.load(cassette).interactions
        #expect(interactions.count == 1)
        let interaction = try #require(interactions.first)
        #expect(interaction.request.target == "/chat?room=1")
        #expect(interaction.request.headers["Upgrade"] == "websocket")
        #expect(interaction.response.status == 101)
        let conversation = try #require(interaction.webSocket)
        #expect(conversation.subprotocol == "chat.v1")
        #expect(
            conversation.messages.map(\.from) == [
                .server, .client, .server, .server, .client, .server, .client, .server, .client,
            ])
        #expect(
            conversation.messages.map(\.payload) == [
                .text(#"{"type":"welcome"}"#), .text("hello"), .text("hi there"), .binary([0, 1, 2, 255]),
                .binary([9, 8, 7]), .binary([9, 8, 7]), .text("fragments"), .text("fragmented"), .text("bye"),
            ])
        let offsets = conversation.messages.map(\.offsetMilliseconds)
        #expect(offsets.allSatisfy { $0 >= 0 } && offsets == offsets.sorted(), "\(offsets)")
        #expect(
            conversation.close
                == WebSocketClose(
                    from: .server, code: 1000, reason: "done",
                    offsetMilliseconds: conversation.close?.offsetMilliseconds))
        #expect((conversation.close?.offsetMilliseconds ?? -1) >= offsets.last ?? 0)
    }

    @Test(
        "permessage-deflate negotiated by Python's websockets on both sides passes through, and the cassette holds the plain text",
        .enabled(if: PythonWebSocketPeer.isAvailable, "the venv of tools/setup.sh --tests has no websockets package"))
    func permessageDeflate() async throws {
        let server = try KakapoProcess(["-c", PythonWebSocketPeer.server], executable: PythonWebSocketPeer.python)
        let serverPort = try await server.waitUntilListening()
        let cassette = try Fixtures.temporaryDirectory() + "/deflate.json"
        let recorder = try KakapoProcess([
            "record", "--upstream", "http://127.0.0.1:\(serverPort)", "--cassette", cassette, "--port", "0",
        ])
        let port = try await recorder.waitUntilListening()
        let client = try KakapoProcess(
            ["-c", PythonWebSocketPeer.client, "ws://127.0.0.1:\(port)/feed", "hello", "count 5", "bye"],
            executable: PythonWebSocketPeer.python)
        #expect(try await client.waitForExit() == 0, "\(client.standardError)")
        #expect(client.standardOutput.contains("extensions: permessage-deflate"), "\(client.standardOutput)")
        #expect(client.standardOutput.contains("closed: 1000 done"), "\(client.standardOutput)")
        #expect(await Self.waitForLog(recorder, "recorded WebSocket GET /feed: 3 client and 6 server messages"))
        recorder.send(SIGINT)
        #expect(try await recorder.waitForExit() == 0)
        server.send(SIGKILL)
        _ = try await server.waitForExit()

        let interaction = try #require(try CassetteFile.load(cassette).interactions.first)
        let extensions = interaction.response.headers["Sec-WebSocket-Extensions"] ?? ""
        #expect(extensions.contains("permessage-deflate"))
        let conversation = try #require(interaction.webSocket)
        let texts = conversation.messages.map { message -> String in
            if case .text(let text) = message.payload { return text }
            return "binary"
        }
        #expect(Array(texts.prefix(3)) == ["hello", "echo: hello", "count 5"])
        #expect(texts.count == 9)
        let repeated =
            "the same words again and again " + "the same words again and again " + "the same words again and again "
        for n in 0..<5 {
            #expect(texts[3 + n] == #"{"n": \#(n), "text": "\#(repeated)"}"#)
        }
        #expect(texts.last == "bye")
        #expect(conversation.close?.code == 1000 && conversation.close?.from == .server)
    }

    @Test(
        "an upstream close with a code that may not be sent (0, 999, 1005, 1006, 65535) is recorded without one, the conversation kept and replayed, the log saying recorded only"
    )
    func unsendableCloseCode() async throws {
        let server = try await WebSocketChatServer.start()
        let cassette = try Fixtures.temporaryDirectory() + "/closes.json"
        let recorder = try KakapoProcess([
            "record", "--upstream", server.baseURL, "--cassette", cassette, "--port", "0",
        ])
        let port = try await recorder.waitUntilListening()
        let codes = [0, 999, 1005, 1006, 65535]
        for code in codes {
            let client = try await WebSocketClient.connect(port: port, path: "/chat?n=\(code)")
            #expect(await client.nextMessage()?.text == #"{"type":"welcome"}"#)
            try client.send(text: "hello")
            #expect(await client.nextMessage()?.text == "hi there")
            #expect(await client.nextMessage()?.payload == .binary([0, 1, 2, 255]))
            try client.send(text: "close \(code)")
            // The tunnel passes the upstream's close on as it came.
            #expect(await client.closeFrame()?.code == code, "code \(code)")
            try client.close(code: 1000)
            let line = "recorded WebSocket GET /chat?n=\(code): 2 client and 3 server messages, closed without a code"
            #expect(await Self.waitForLog(recorder, line), "\(recorder.standardError)")
            client.disconnect()
        }
        recorder.send(SIGINT)
        #expect(try await recorder.waitForExit() == 0)
        await server.stop()
        let log = recorder.standardError
        #expect(!log.contains("not recorded"), "\(log)")
        for code in codes { #expect(log.contains("its code \(code) may not be sent"), "\(log)") }

        let interactions = try CassetteFile.load(cassette).interactions
        #expect(interactions.count == codes.count)
        for interaction in interactions {
            let close = try #require(interaction.webSocket?.close)
            #expect(close.from == .server && close.code == nil && close.reason == "")
        }
        // And it replays: the server's close comes without a code.
        let replay = try KakapoProcess(["replay", "--cassette", cassette, "--port", "0"])
        let replayPort = try await replay.waitUntilListening()
        let client = try await WebSocketClient.connect(port: replayPort, path: "/chat?n=1005")
        #expect(await client.nextMessage()?.text == #"{"type":"welcome"}"#)
        try client.send(text: "hello")
        #expect(await client.nextMessage()?.text == "hi there")
        #expect(await client.nextMessage()?.payload == .binary([0, 1, 2, 255]))
        try client.send(text: "close 1005")
        let replayed = try #require(await client.closeFrame())
        #expect(replayed.code == nil)
        client.disconnect()
        replay.send(SIGINT)
        _ = try await replay.waitForExit()
    }

    @Test("kill -9 during a second, open conversation loses no finished one")
    func killDuringConversation() async throws {
        let server = try await WebSocketChatServer.start()
        let cassette = try Fixtures.temporaryDirectory() + "/killed.json"
        let recorder = try KakapoProcess([
            "record", "--upstream", server.baseURL, "--cassette", cassette, "--port", "0",
        ])
        let port = try await recorder.waitUntilListening()
        let first = try await WebSocketClient.connect(port: port, path: "/first")
        #expect(await first.nextMessage()?.text == #"{"type":"welcome"}"#)
        try first.send(text: "hello")
        #expect(await first.nextMessage()?.text == "hi there")
        try first.close(code: 1000, reason: "finished")
        #expect(await first.closeFrame()?.code == 1000)
        // The first is recorded (journaled) once both closes passed.
        #expect(
            await Self.waitForLog(
                recorder, "recorded WebSocket GET /first: 1 client and 3 server messages, closed 1000 by the client"))
        let second = try await WebSocketClient.connect(port: port, path: "/second")
        try second.send(text: "hello")
        #expect(await second.nextMessage()?.text == #"{"type":"welcome"}"#)
        recorder.send(SIGKILL)
        _ = try await recorder.waitForExit()
        second.disconnect()
        await server.stop()

        _ = try CassetteSession.recover(cassette)
        let interactions = try CassetteFile.load(cassette).interactions
        #expect(interactions.map(\.request.target) == ["/first"])
        let conversation = try #require(interactions.first?.webSocket)
        #expect(conversation.messages.map(\.payload.bytes).count == 4)
        #expect(
            conversation.close
                == WebSocketClose(
                    from: .client, code: 1000, reason: "finished",
                    offsetMilliseconds: conversation.close?.offsetMilliseconds))
    }

    @Test(
        "Kakapo stopping records the open conversation as it stands; a refusal with a body is recorded as an ordinary answer"
    )
    func stoppingAndRefusal() async throws {
        let hostile = try await HostileWebSocketUpstream.start()
        let server = try await WebSocketChatServer.start()
        let directory = try Fixtures.temporaryDirectory()
        let recorder = try KakapoProcess([
            "record", "--upstream", server.baseURL, "--cassette", directory + "/open.json", "--port", "0",
        ])
        let port = try await recorder.waitUntilListening()
        let client = try await WebSocketClient.connect(port: port, path: "/open")
        #expect(await client.nextMessage()?.text == #"{"type":"welcome"}"#)
        try client.send(text: "still talking")
        #expect(await client.nextMessage()?.text == "echo: still talking")
        recorder.send(SIGINT)
        #expect(try await recorder.waitForExit() == 0)
        let open = try #require(try CassetteFile.load(directory + "/open.json").interactions.first?.webSocket)
        #expect(
            open.messages.map(\.payload) == [
                .text(#"{"type":"welcome"}"#), .text("still talking"), .text("echo: still talking"),
            ])
        #expect(open.close == nil)
        #expect(
            recorder.standardError.contains("recorded WebSocket GET /open: 1 client and 2 server messages, not closed"))
        client.disconnect()
        await server.stop()

        let refusing = try KakapoProcess([
            "record", "--upstream", hostile.baseURL, "--cassette", directory + "/refused.json", "--port", "0",
        ])
        let refusingPort = try await refusing.waitUntilListening()
        let refused = try await WebSocketClient.connect(port: refusingPort, path: "/forbidden")
        #expect(refused.handshake.status == 403)
        let unrecorded = try await WebSocketClient.connect(port: refusingPort, path: "/missing")
        #expect(unrecorded.handshake.status == 404)
        #expect(
            await Self.waitForLog(refusing, "not recorded: the upstream answered 404 without a Content-Length body"))
        refusing.send(SIGINT)
        #expect(try await refusing.waitForExit() == 0)
        let interactions = try CassetteFile.load(directory + "/refused.json").interactions
        #expect(interactions.map(\.request.target) == ["/forbidden"])
        #expect(interactions.first?.response.status == 403)
        #expect(interactions.first?.response.body == Array("no chat for you".utf8))
        #expect(interactions.first?.webSocket == nil)
        await hostile.stop()
    }

    @Test(
        "hostile frames from the upstream (a bad length, a huge declared length, invalid deflate) stop the recording, never the tunnel or the server"
    )
    func hostileFrames() async throws {
        let hostile = try await HostileWebSocketUpstream.start()
        let cassette = try Fixtures.temporaryDirectory() + "/hostile.json"
        let recorder = try KakapoProcess([
            "record", "--upstream", hostile.baseURL, "--cassette", cassette, "--port", "0",
        ])
        let port = try await recorder.waitUntilListening()
        for (path, expected) in HostileWebSocketUpstream.scripts {
            // The hostile bytes pass on, and the tunnel still carries what follows them both ways.
            let (head, after) = await Self.rawConversation(port: port, path: path)
            #expect(head.hasPrefix("HTTP/1.1 101"), "\(path): \(head)")
            #expect(after.contains("still-here"), "\(path): \(after)")
            #expect(
                await Self.waitForLog(
                    recorder, "WebSocket GET \(path): recording stopped after 1 messages: \(expected)"),
                "\(recorder.standardError)")
            #expect(
                await Self.waitForLog(recorder, "recorded WebSocket GET \(path): 0 client and 1 server messages"),
                "\(recorder.standardError)")
        }
        // Kakapo goes on serving.
        let client = try TestClient(port: port)
        #expect(try await client.send(.get, "/plain").status == 404)
        client.shutdown()
        recorder.send(SIGINT)
        #expect(try await recorder.waitForExit() == 0)
        await hostile.stop()
        let interactions = try CassetteFile.load(cassette).interactions.filter { $0.webSocket != nil }
        #expect(interactions.map(\.request.target) == HostileWebSocketUpstream.scripts.map(\.path))
        for interaction in interactions {
            #expect(
                interaction.webSocket?.messages.map(\.payload) == [.text("before")], "\(interaction.request.target)")
        }
    }
}

/// An upstream that answers the upgrade `101` with permessage-deflate and then sends one good message and
/// a hostile frame chosen by the path, answering anything the client sends with the raw bytes `still-here`;
/// `/forbidden` is refused 403 with a body, `/missing` 404 without a length; a plain request gets 404.
final class HostileWebSocketUpstream: Sendable {
    /// Path, and the reason the recorder gives for stopping.
    static let scripts: [(path: String, reason: String)] = [
        ("/bad-length", "the server's frames are malformed (a 64-bit length with its top bit set)"),
        ("/huge", "a server message is larger than"),
        ("/bad-deflate", "a server message is not valid permessage-deflate data"),
    ]

    static func bytes(for path: String) -> [UInt8] {
        // "before", as a plain text message, then "Hello" compressed (RFC 7692) for the deflate case.
        let before: [UInt8] = [0x81, 0x06] + Array("before".utf8)
        switch path {
        case "/bad-length": return before + [0x82, 0x7F, 0x80, 0, 0, 0, 0, 0, 0, 1]
        case "/huge": return before + [0x82, 0x7F, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]
        default: return before + [0xC1, 0x04, 0xFF, 0xFF, 0xFF, 0xFF]
        }
    }

    private let group: MultiThreadedEventLoopGroup
    private let channel: any Channel
    let baseURL: String

    static func start() async throws -> HostileWebSocketUpstream {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let channel = try await ServerBootstrap(group: group)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(Handler()) }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        return HostileWebSocketUpstream(group: group, channel: channel)
    }

    private init(group: MultiThreadedEventLoopGroup, channel: any Channel) {
        self.group = group
        self.channel = channel
        baseURL = "http://127.0.0.1:\(channel.localAddress?.port ?? 0)"
    }

    func stop() async {
        try? await channel.close()
        try? await group.shutdownGracefully()
    }

    private final class Handler: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
        typealias OutboundOut = ByteBuffer
        private var head: [UInt8] = []
        private var upgraded = false

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            var buffer = unwrapInboundIn(data)
            if upgraded {
                context.writeAndFlush(wrapOutboundOut(ByteBuffer(string: "still-here")), promise: nil)
                return
            }
            head += buffer.readBytes(length: buffer.readableBytes) ?? []
            let text = String(decoding: head, as: UTF8.self)
            guard text.contains("\r\n\r\n") else { return }
            let path = text.split(separator: " ").dropFirst().first.map(String.init) ?? "/"
            guard text.lowercased().contains("upgrade: websocket") else {
                context.writeAndFlush(
                    wrapOutboundOut(ByteBuffer(string: "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")),
                    promise: nil)
                head = []
                return
            }
            switch path {
            case "/forbidden":
                let body = "no chat for you"
                context.writeAndFlush(
                    wrapOutboundOut(
                        ByteBuffer(
                            string:
                                "HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"
                        )),
                    promise: nil)
            case "/missing":
                context.writeAndFlush(
                    wrapOutboundOut(ByteBuffer(string: "HTTP/1.1 404 Not Found\r\nConnection: close\r\n\r\nnothing"))
                )
                .whenComplete { [channel = context.channel] _ in channel.close(promise: nil) }
            default:
                upgraded = true
                let answer =
                    "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                    + "Sec-WebSocket-Accept: x\r\nSec-WebSocket-Extensions: permessage-deflate\r\n\r\n"
                context.writeAndFlush(
                    wrapOutboundOut(ByteBuffer(bytes: Array(answer.utf8) + HostileWebSocketUpstream.bytes(for: path))),
                    promise: nil)
            }
        }
    }
}
