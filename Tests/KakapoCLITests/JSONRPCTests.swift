import Foundation
import KakapoHTTP
import KakapoTestSupport
import Testing

/// JSON-RPC 2.0 recorded with `kakapo record` and replayed to a client that numbers its requests its own
/// way: matching leaves ids out, and every replayed answer (a JSON body, a batch, each event of a stream)
/// carries the client's ids.
@Suite("JSON-RPC and MCP")
struct JSONRPCTests {
    /// A JSON-RPC upstream: `add` and `echo` answer plain JSON (spaced, so the test sees the bytes kept),
    /// `progress` an event stream holding a notification, a server-to-client request with an id of its own
    /// and the response; a batch answers in reverse order; a notification gets 202.
    static func upstream() async throws -> TestUpstream {
        try await TestUpstream.start { request in
            guard let json = try? JSONSerialization.jsonObject(with: Data(request.body)) else {
                return .response(HTTP.Response(status: 400))
            }
            func result(_ message: [String: Any]) -> Any? {
                let params = message["params"]
                switch message["method"] as? String {
                case "add":
                    let numbers = params as? [String: Int] ?? [:]
                    return (numbers["a"] ?? 0) + (numbers["b"] ?? 0)
                case "echo": return params
                default: return nil
                }
            }
            func idText(_ id: Any) -> String {
                String(decoding: try! JSONSerialization.data(withJSONObject: [id]), as: UTF8.self).dropFirst()
                    .dropLast().description
            }
            func resultText(_ value: Any?) -> String {
                String(
                    decoding: try! JSONSerialization.data(withJSONObject: [value ?? NSNull()], options: .sortedKeys),
                    as: UTF8.self
                ).dropFirst().dropLast().description
            }
            if let batch = json as? [[String: Any]] {
                let answers = batch.reversed().compactMap { message in
                    message["id"].map {
                        #"{"jsonrpc": "2.0", "id": \#(idText($0)), "result": \#(resultText(result(message)))}"#
                    }
                }
                return .response(
                    HTTP.Response(
                        status: 200, headers: ["Content-Type": "application/json"],
                        body: Array(("[" + answers.joined(separator: ", ") + "]").utf8)))
            }
            guard let message = json as? [String: Any] else { return .response(HTTP.Response(status: 400)) }
            guard let id = message["id"] else { return .response(HTTP.Response(status: 202)) }
            if message["method"] as? String == "progress" {
                let events = [
                    #"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}"#,
                    #"{"jsonrpc":"2.0","id":7,"method":"ping"}"#,
                    #"{"jsonrpc":"2.0","id":\#(idText(id)),"result":{"done":true}}"#,
                ].map { Array("event: message\r\ndata: \($0)\r\n\r\n".utf8) }
                return .paced(headers: ["Content-Type": "text/event-stream"], chunks: events, gap: 0.02)
            }
            return .response(
                HTTP.Response(
                    status: 200, headers: ["Content-Type": "application/json"],
                    body: Array(
                        #"{"jsonrpc": "2.0", "id": \#(idText(id)), "result": \#(resultText(result(message)))}"#.utf8)))
        }
    }

    /// POSTs `body` as JSON.
    static func call(_ client: TestClient, _ body: String, session: String? = nil) async throws -> HTTP.Response {
        var headers: HTTP.Headers = [
            "Content-Type": "application/json", "Accept": "application/json, text/event-stream",
        ]
        if let session { headers.add(name: "Mcp-Session-Id", value: session) }
        return try await client.send(.post, "/rpc", headers: headers, body: Array(body.utf8))
    }

    @Test(
        "recorded with ids 1, 2, 3 and replayed to ids 41, 42, \"abc\": each answer, event and batch element carries the client's id"
    )
    func freshIDs() async throws {
        let cassette = try Fixtures.temporaryDirectory() + "/rpc.json"
        let upstream = try await Self.upstream()
        let recorder = try KakapoProcess([
            "record", "--upstream", upstream.baseURL, "--cassette", cassette, "--port", "0",
        ])
        let recording = try TestClient(port: try await recorder.waitUntilListening())
        let add = try await Self.call(recording, #"{"jsonrpc":"2.0","id":1,"method":"add","params":{"a":2,"b":3}}"#)
        #expect(add.text == #"{"jsonrpc": "2.0", "id": 1, "result": 5}"#)
        let progress = try await Self.call(recording, #"{"jsonrpc":"2.0","id":2,"method":"progress"}"#)
        #expect(progress.text.contains(#""id":2,"result""#))
        _ = try await Self.call(recording, #"{"jsonrpc":"2.0","id":3,"method":"echo","params":["x"]}"#)
        _ = try await Self.call(
            recording,
            #"[{"jsonrpc":"2.0","id":4,"method":"add","params":{"a":1,"b":1}},{"jsonrpc":"2.0","method":"log","params":["hi"]},{"jsonrpc":"2.0","id":5,"method":"add","params":{"a":2,"b":2}}]"#
        )
        let note = try await Self.call(recording, #"{"jsonrpc":"2.0","method":"log","params":["hi"]}"#)
        #expect(note.status == 202)
        recording.shutdown()
        recorder.send(SIGINT)
        #expect(try await recorder.waitForExit() == 0)
        await upstream.stop()
        // `cassette show` names each call's method next to the URL.
        let shown = try await KakapoProcess.run(["cassette", "show", cassette]).output
        let lines = shown.split(separator: "\n").map(String.init)
        #expect(lines.first?.hasPrefix("#0\tPOST\t/rpc  jsonrpc add\t200\t") == true, "\(shown)")
        #expect(lines.contains { $0.hasPrefix("#3\tPOST\t/rpc  jsonrpc batch: add, log, add\t") }, "\(shown)")
        #expect(lines.contains { $0.hasPrefix("#4\tPOST\t/rpc  jsonrpc notification log\t202\t") }, "\(shown)")

        let replayer = try KakapoProcess(["replay", "--cassette", cassette, "--port", "0"])
        let client = try TestClient(port: try await replayer.waitUntilListening())
        defer { client.shutdown() }
        // A plain JSON answer: only the id changes, and Content-Length states the new size.
        let added = try await Self.call(
            client, #"{"jsonrpc": "2.0", "method": "add", "params": {"b": 3, "a": 2}, "id": 41}"#)
        #expect(added.status == 200)
        #expect(added.text == #"{"jsonrpc": "2.0", "id": 41, "result": 5}"#)
        #expect(added.headers["Content-Length"] == String(added.body.count))
        #expect(added.headers["X-Kakapo-Source"] == "cassette")
        // An event stream: the response gets the client's id; the server's own request (id 7) keeps its id.
        let streamed = try await Self.call(client, #"{"jsonrpc":"2.0","id":42,"method":"progress"}"#)
        #expect(
            streamed.text.contains("data: {\"jsonrpc\":\"2.0\",\"id\":42,\"result\":{\"done\":true}}\r\n\r\n"),
            "\(streamed.text)")
        #expect(streamed.text.contains(#"{"jsonrpc":"2.0","id":7,"method":"ping"}"#))
        #expect(streamed.text.contains(#""method":"notifications/progress""#))
        // A string id stays a string; a session header (recorded without one) does not count in matching.
        let echoed = try await Self.call(
            client, #"{"jsonrpc":"2.0","id":"abc","method":"echo","params":["x"]}"#, session: "another-session")
        #expect(echoed.text == #"{"jsonrpc": "2.0", "id": "abc", "result": ["x"]}"#)
        // A batch: each answer goes to the request in the same place, whatever the answers' order.
        let batch = try await Self.call(
            client,
            #"[{"jsonrpc":"2.0","id":"first","method":"add","params":{"a":1,"b":1}},{"jsonrpc":"2.0","method":"log","params":["hi"]},{"jsonrpc":"2.0","id":100,"method":"add","params":{"a":2,"b":2}}]"#
        )
        #expect(
            batch.text
                == #"[{"jsonrpc": "2.0", "id": 100, "result": 4}, {"jsonrpc": "2.0", "id": "first", "result": 2}]"#,
            "\(batch.text)")
        // A notification matches on method and params.
        #expect(try await Self.call(client, #"{"jsonrpc":"2.0","method":"log","params":["hi"]}"#).status == 202)
        // Other params, or a notification where a request was recorded, are misses.
        let other = try await Self.call(client, #"{"jsonrpc":"2.0","id":43,"method":"add","params":{"a":2,"b":4}}"#)
        #expect(other.status == 404 && other.text.contains("/params/b"), "\(other.text)")
        // The nearest recording of a miss is a call of the same method, not the first in the cassette.
        let otherEcho = try await Self.call(client, #"{"jsonrpc":"2.0","id":44,"method":"echo","params":["y"]}"#)
        let report = try JSONSerialization.jsonObject(with: Data(otherEcho.body)) as? [String: Any]
        let nearest = (report?["nearest"] as? [[String: Any]])?.first
        #expect(nearest?["interaction"] as? Int == 2, "\(otherEcho.text)")
        let unanswered = try await Self.call(client, #"{"jsonrpc":"2.0","method":"add","params":{"a":2,"b":3}}"#)
        #expect(unanswered.status == 404)
        replayer.send(SIGINT)
        #expect(try await replayer.waitForExit() == 0)
    }

    /// The venv `tools/setup.sh --tests` makes, when it has the MCP Python SDK. Under CI (`CI=true`, where
    /// tools/setup.sh installs it) the test always runs, so a missing install fails instead of skipping.
    static let python = CLITests.packageRoot + "/.build/python-venv/bin/python"
    static let hasMCP =
        ProcessInfo.processInfo.environment["CI"] == "true"
        || (try? KakapoProcess.runBlocking(["-c", "import mcp.server.mcpserver"], executable: python)) == 0

    /// A real MCP server (the Python SDK's `MCPServer`, streamable HTTP) on a free port, with one tool.
    static let mcpServer = """
        import asyncio, socket, uvicorn
        from mcp.server.mcpserver import MCPServer
        app = MCPServer("demo")
        @app.tool()
        def add(a: int, b: int) -> int:
            \"\"\"Adds two numbers.\"\"\"
            return a + b
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        print(f"mcp listening on http://127.0.0.1:{sock.getsockname()[1]}", flush=True)
        asyncio.run(uvicorn.Server(uvicorn.Config(app.streamable_http_app(), log_level="warning")).serve(sockets=[sock]))
        """

    /// The SDK's client in the session (handshake) mode: initialize, tools/list (as many times as its second
    /// argument says), tools/call, then DELETE.
    static let mcpClient = """
        import asyncio, sys
        from mcp import Client
        async def main():
            async with Client(sys.argv[1], mode="legacy", read_timeout_seconds=10) as client:
                for _ in range(int(sys.argv[2])):
                    tools = await client.list_tools()
                result = await client.call_tool("add", {"a": 2, "b": 3})
                print("tools", [tool.name for tool in tools.tools], "result", result.content[0].text)
        asyncio.run(main())
        """

    @Test(
        "a real MCP session (Python SDK server and client) recorded, then replayed to a fresh client with the server stopped",
        .enabled(if: hasMCP, "the venv of tools/setup.sh --tests has no mcp package"), .timeLimit(.minutes(1)))
    func mcpSession() async throws {
        let cassette = try Fixtures.temporaryDirectory() + "/mcp.json"
        let server = try KakapoProcess(["-c", Self.mcpServer], executable: Self.python)
        let serverPort = try await server.waitUntilListening()
        let recorder = try KakapoProcess([
            "record", "--upstream", "http://127.0.0.1:\(serverPort)", "--cassette", cassette, "--port", "0",
        ])
        let recordPort = try await recorder.waitUntilListening()
        let live = try await KakapoProcess.run(
            ["-c", Self.mcpClient, "http://127.0.0.1:\(recordPort)/mcp", "1"], executable: Self.python)
        #expect(live.status == 0 && live.output.contains("tools ['add'] result 5"), "\(live.error)")
        recorder.send(SIGINT)
        #expect(try await recorder.waitForExit() == 0)
        server.send(SIGKILL)
        _ = try await server.waitForExit()

        // The session id the server handed out is in the file (a routing id, not a credential).
        let text = try String(contentsOfFile: cassette, encoding: .utf8)
        let session = text.firstMatch(of: /\["mcp-session-id", "([0-9a-f]{16,})"\]/).map { String($0.output.1) }
        #expect(session != nil && !text.contains(#"["mcp-session-id", "[REDACTED]"]"#), "\(text)")
        #expect(text.contains(#""method": "initialize""#) && text.contains(#""method": "tools/call""#))

        // A fresh client that lists the tools twice: its second tools/list (id 3) replays the recorded one
        // (id 2) and its tools/call (id 4) the recorded one (id 3). The SDK waits for an answer with the id it
        // sent, so it finishes only if each event carries its own id.
        let replayer = try KakapoProcess(["replay", "--cassette", cassette, "--port", "0"])
        let replayPort = try await replayer.waitUntilListening()
        let replayed = try await KakapoProcess.run(
            ["-c", Self.mcpClient, "http://127.0.0.1:\(replayPort)/mcp", "2"], executable: Self.python)
        #expect(replayed.status == 0 && replayed.output.contains("tools ['add'] result 5"), "\(replayed.error)")
        replayer.send(SIGINT)
        #expect(try await replayer.waitForExit() == 0)
        #expect(replayer.standardError.contains("missed 0"), "\(replayer.standardError)")
    }
}
