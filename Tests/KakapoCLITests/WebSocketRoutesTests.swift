import Foundation
import Kakapo
import KakapoTestSupport
import Testing

/// Routes that answer WebSocket upgrades with a script, run as a user runs them: the built `kakapo` with
/// `--routes`, and a real WebSocket client (`WebSocketClient`, NIO) on a real socket.
@Suite("Command line: websocket routes")
struct WebSocketRoutesTests {
    /// A chat route with a rule of each kind, and a quiet route without a default rule.
    static let chat = """
        routes:
          - path: /chat/:room
            websocket:
              subprotocol: chat
              send: [{text: "welcome to {{params.room}}"}]
              on:
                - when: {fields: {/type: ping}}
                  send: [{json: {type: pong, room: "{{params.room}}", echo: "{{message.json.payload.id}}"}}]
                - when: {json: {type: status}}
                  send: [{json: {type: status, ok: true}}, {text: "still here", delay: 200ms}]
                - when: {text: {matches: "^bye"}}
                  send: [{text: see you}]
                  close: {code: 1000, reason: done}
                - when: {text: hello}
                  send: [{base64: AAEC}]
                - send: [{text: "unknown: {{message.text}} (from {{query.user}})"}]
          - path: /quiet
            websocket:
              on:
                - when: {text: ping}
                  send: [{text: pong}]
        """

    /// Writes `text` as a routes file and returns its path.
    static func routesFile(_ text: String) throws -> String {
        let file = try Fixtures.temporaryDirectory() + "/routes.yaml"
        try text.write(toFile: file, atomically: true, encoding: .utf8)
        return file
    }

    /// The JSON of a text message, or nil.
    static func json(_ message: WebSocketClient.Message?) -> JSONValue? {
        message?.text.flatMap { try? JSONParser.parse($0) }
    }

    @Test("a scripted route greets, answers by JSON, by text and by default, sends bytes, and closes with its code")
    func conversation() async throws {
        let process = try KakapoProcess(["serve", "--routes", try Self.routesFile(Self.chat), "--port", "0"])
        let port = try await process.waitUntilListening()
        let client = try await WebSocketClient.connect(
            port: port, path: "/chat/lobby?user=ada", subprotocols: ["other", "chat"])
        #expect(client.handshake.status == 101, "\(client.handshake.head)")
        #expect(client.handshake.subprotocol == "chat")
        #expect(await client.nextMessage()?.text == "welcome to lobby")

        try client.send(text: #"{"type": "ping", "payload": {"id": 42}}"#)
        #expect(Self.json(await client.nextMessage()) == ["type": "pong", "room": "lobby", "echo": 42])

        // The whole-JSON rule, then a message 200 ms after the one before it.
        try client.send(text: #"{"type":"status"}"#)
        let status = try #require(await client.nextMessage())
        #expect(Self.json(status) == ["type": "status", "ok": true])
        let later = try #require(await client.nextMessage())
        #expect(later.text == "still here")
        #expect(later.arrived - status.arrived >= .milliseconds(190), "\(later.arrived - status.arrived)")

        try client.send(text: "hello")
        #expect(await client.nextMessage()?.payload == .binary([0, 1, 2]))
        try client.send(text: "what is this?")
        #expect(await client.nextMessage()?.text == "unknown: what is this? (from ada)")
        try client.send(binary: [1, 2, 3])
        #expect(await client.nextMessage()?.text == "unknown:  (from ada)")

        try client.send(text: "bye for now")
        #expect(await client.nextMessage()?.text == "see you")
        let close = try #require(await client.closeFrame())
        #expect(close.code == 1000)
        #expect(close.reason == "done")
        #expect(await client.waitForDisconnect())

        // Without the offered subprotocol the conversation goes ahead without one.
        let plain = try await WebSocketClient.connect(port: port, path: "/chat/kitchen")
        #expect(plain.handshake.status == 101)
        #expect(plain.handshake.subprotocol == nil)
        #expect(await plain.nextMessage()?.text == "welcome to kitchen")
        try plain.close()
        #expect(await plain.waitForDisconnect())

        process.send(SIGINT)
        #expect(try await process.waitForExit() == 0)
        #expect(process.standardError.contains("kakapo: 2 requests (2 route)"), "\(process.standardError)")
    }

    @Test("a message no rule takes is ignored, logged with --verbose, and the conversation goes on")
    func unmatchedIgnored() async throws {
        let process = try KakapoProcess([
            "serve", "--routes", try Self.routesFile(Self.chat), "--port", "0", "--verbose",
        ])
        let client = try await WebSocketClient.connect(port: try await process.waitUntilListening(), path: "/quiet")
        #expect(client.handshake.status == 101)
        try client.send(text: "anyone?")
        try client.send(binary: [7])
        try client.send(text: "ping")
        // The first message that comes answers the third: the others were ignored.
        #expect(await client.nextMessage()?.text == "pong")
        try client.close()
        #expect(await client.closeFrame()?.code == 1000)
        #expect(client.events.compactMap(\.message).map(\.text) == ["pong"])
        process.send(SIGINT)
        #expect(try await process.waitForExit() == 0)
        #expect(
            process.standardError.contains(#"no websocket rule takes the client's text message "anyone?": ignored"#),
            "\(process.standardError)")
        #expect(process.standardError.contains("binary message of 1 bytes: ignored"), "\(process.standardError)")
    }

    @Test("in front of a cassette, a plain request to a websocket route's path is replayed, an upgrade is scripted")
    func passesOnToCassette() async throws {
        let routes = try Self.routesFile(
            """
            routes:
              - path: /users/:id
                latency: 300ms
                websocket:
                  send: [{json: {user: "{{params.id}}", live: true}}]
            """)
        let process = try KakapoProcess([
            "replay", "--cassette", CLITests.demoCassette, "--routes", routes, "--port", "0",
        ])
        let port = try await process.waitUntilListening()
        let http = try TestClient(port: port)
        let recorded = try await http.send(.get, "/users/1")
        #expect(recorded.headers["X-Kakapo-Source"] == "cassette")
        #expect(recorded.text.contains("Ada Lovelace"))
        http.shutdown()

        // The route's latency holds the handshake back.
        let started = ContinuousClock.now
        let client = try await WebSocketClient.connect(port: port, path: "/users/1")
        let handshake = ContinuousClock.now - started
        #expect(client.handshake.status == 101)
        #expect(handshake >= .milliseconds(290), "\(handshake)")
        #expect(Self.json(await client.nextMessage()) == ["user": "1", "live": true])
        try client.close()
        #expect(await client.waitForDisconnect())
        process.send(SIGINT)
        #expect(try await process.waitForExit() == 0)
        #expect(process.standardError.contains("(1 route, 1 cassette)"), "\(process.standardError)")
    }

    @Test("a websocket route added through the admin API answers at once, and removing it ends that")
    func adminAPI() async throws {
        let process = try KakapoProcess(["serve", "--routes", try Self.routesFile("routes: []\n"), "--port", "0"])
        let port = try await process.waitUntilListening()
        let http = try TestClient(port: port)
        let added = try await http.send(
            .post, "/__kakapo/routes", headers: ["Content-Type": "application/json"],
            body: Array(
                #"""
                {"id": "live", "path": "/live/:feed", "websocket": {
                  "send": [{"text": "feed {{params.feed}}"}],
                  "on": [{"when": {"text": "stop"}, "close": {"code": 4000, "reason": "stopped"}}]}}
                """#.utf8))
        #expect(added.status == 201, "\(added.text)")
        let client = try await WebSocketClient.connect(port: port, path: "/live/prices")
        #expect(client.handshake.status == 101)
        #expect(await client.nextMessage()?.text == "feed prices")
        try client.send(text: "stop")
        let close = try #require(await client.closeFrame())
        #expect(close.code == 4000)
        #expect(close.reason == "stopped")

        let refused = try await http.send(
            .post, "/__kakapo/routes", headers: ["Content-Type": "application/json"],
            body: Array(#"{"path": "/x", "websocket": {"close": {"code": 1006}}}"#.utf8))
        #expect(refused.status == 400)
        #expect(refused.text.contains("websocket.close.code: expected a close code"), "\(refused.text)")

        #expect(try await http.send(.delete, "/__kakapo/routes/live").status == 204)
        let gone = try await WebSocketClient.connect(port: port, path: "/live/prices")
        #expect(gone.handshake.status == 404, "\(gone.handshake.head)")
        http.shutdown()
        process.send(SIGINT)
        #expect(try await process.waitForExit() == 0)
    }

    @Test("the scripted conversation docs/websockets.md shows runs as its transcript says")
    func docsTranscript() async throws {
        let docs = try String(contentsOfFile: CLITests.packageRoot + "/docs/websockets.md", encoding: .utf8)
        let section = try #require(docs.range(of: "## Scripted conversations"))
        let yamlStart = try #require(docs[section.upperBound...].range(of: "```yaml\n"))
        let yamlEnd = try #require(docs[yamlStart.upperBound...].range(of: "```"))
        let transcriptStart = try #require(docs[yamlEnd.upperBound...].range(of: "```\n"))
        let transcriptEnd = try #require(docs[transcriptStart.upperBound...].range(of: "```"))
        let routes = try Self.routesFile(String(docs[yamlStart.upperBound..<yamlEnd.lowerBound]))
        let lines = docs[transcriptStart.upperBound..<transcriptEnd.lowerBound].split(separator: "\n").map(String.init)
        // `$ python chat.py ws://127.0.0.1:PORT/PATH MESSAGE...`: the path is what the client connects to.
        let command = try #require(lines.first { $0.hasPrefix("$ python") })
        let url = try #require(command.split(separator: " ").first { $0.hasPrefix("ws://") })
        let path = "/" + url.dropFirst("ws://".count).split(separator: "/", maxSplits: 1).dropFirst().joined()

        let process = try KakapoProcess(["serve", "--routes", routes, "--port", "0"])
        let client = try await WebSocketClient.connect(port: try await process.waitUntilListening(), path: path)
        #expect(client.handshake.status == 101)
        var checked = 0
        for line in lines {
            if line.hasPrefix("-> ") {
                try client.send(text: String(line.dropFirst(3)))
            } else if line.hasPrefix("<- ") {
                #expect(await client.nextMessage()?.text == String(line.dropFirst(3)), "\(line)")
                checked += 1
            } else if line.hasPrefix("closed ") {
                let close = await client.closeFrame()
                #expect(close.map { "closed \($0.code.map(String.init) ?? "") \($0.reason)" } == line)
                checked += 1
            }
        }
        #expect(checked >= 3)
        process.send(SIGINT)
        #expect(try await process.waitForExit() == 0)
    }

    @Test(
        "Python's websockets client, offering permessage-deflate, talks to a scripted route without it",
        .enabled(if: PythonWebSocketPeer.isAvailable, "the venv of tools/setup.sh --tests has no websockets package"))
    func pythonClient() async throws {
        let routes = try Self.routesFile(
            """
            routes:
              - path: /feed
                websocket:
                  on:
                    - when: {text: {matches: "^count [0-9]+$"}}
                      send: [{json: {n: 1}}, {json: {n: 2}, delay: 20ms}]
                    - when: {text: bye}
                      close: {reason: done}
                    - send: [{text: "echo: {{message.text}}"}]
            """)
        let process = try KakapoProcess(["serve", "--routes", routes, "--port", "0"])
        let port = try await process.waitUntilListening()
        let client = try KakapoProcess(
            ["-c", PythonWebSocketPeer.client, "ws://127.0.0.1:\(port)/feed", "hello", "count 2", "bye"],
            executable: PythonWebSocketPeer.python)
        #expect(try await client.waitForExit() == 0, "\(client.standardError)")
        // No extension: Kakapo declines permessage-deflate for what it plays.
        let lines = client.standardOutput.split(separator: "\n").map(String.init)
        #expect(
            lines == [
                "extensions: ", "reply: echo: hello", #"reply: {"n":1}"#, #"reply: {"n":2}"#, "closed: 1000 done",
            ],
            "\(client.standardOutput)")
        process.send(SIGINT)
        #expect(try await process.waitForExit() == 0)
    }

    @Test("routes lint and serve name a script's mistake by file, line, column and key path")
    func lintAndStart() async throws {
        let file = try Self.routesFile(
            """
            routes:
              - path: /chat
                websocket:
                  on:
                    - when: {text: "{{message.text}}"}
            """)
        let lint = try await KakapoProcess.run(["routes", "lint", file])
        #expect(lint.status == 3)
        #expect(
            lint.error.contains(
                "\(file):5:24: routes[0].websocket.on[0].when.text: a when compares the client's message as written"),
            "\(lint.error)")
        let serve = try await KakapoProcess.run(["serve", "--routes", file, "--port", "0"])
        #expect(serve.status == 3)
        #expect(serve.error.contains("\(file):5:24: routes[0].websocket.on[0].when.text"), "\(serve.error)")
        try Self.chat.write(toFile: file, atomically: true, encoding: .utf8)
        let valid = try await KakapoProcess.run(["routes", "lint", file])
        #expect(valid.status == 0)
        #expect(valid.output.contains("2 routes, 0 resources"), "\(valid.output)")
    }
}

extension WebSocketClient.Event {
    /// The message of a message event.
    fileprivate var message: WebSocketClient.Message? {
        if case .message(let message) = self { return message }
        return nil
    }
}
