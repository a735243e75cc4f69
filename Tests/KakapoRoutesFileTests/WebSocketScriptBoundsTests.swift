import Foundation
import KakapoHTTP
import KakapoStubs
import KakapoTestSupport
import Testing

/// A websocket script's templates may repeat the client's message: what one event sends is bounded in bytes
/// (the largest message Kakapo takes, `--max-body-size`), found without building more than that.
@Suite("Routes files: websocket script bounds")
struct WebSocketScriptBoundsTests {
    /// `{{message.text}}` repeated `count` times in one text message, and in one JSON message.
    static func amplifying(_ count: Int) -> String {
        let tags = String(repeating: "{{message.text}}", count: count)
        let members = (0..<count).map { "m\($0): \"{{message.text}}\"" }.joined(separator: ", ")
        return """
            routes:
              - path: /text
                websocket:
                  on:
                    - send: [{text: "\(tags)"}]
              - path: /json
                websocket:
                  on:
                    - send: [{json: {\(members), n: "#{{message.text}}#"}}]
              - path: /two
                websocket:
                  on:
                    - send: [{text: "{{message.text}}"}, {text: "{{message.text}}"}]
              - path: /open
                websocket:
                  send: [{text: "\(String(repeating: "{{headers.x-big}}", count: count))"}]
            """
    }

    static func script(_ yaml: String, _ path: String, headers: [(String, String)] = []) throws
        -> WebSocketScriptAnswer
    {
        var request = WebSocketScriptTests.upgrade(path)
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        return try WebSocketScriptTests.script(yaml, request)
    }

    @Test("a reply at the limit is sent whole, one byte past it is refused as tooLarge")
    func limitInBytes() throws {
        let yaml = Self.amplifying(10)
        let text = try Self.script(yaml, "/text")
        let message = String(repeating: "é", count: 50)  // 100 bytes of UTF-8
        let whole = String(repeating: message, count: 10)
        #expect(text.received(.text(message), limit: 1000)?.steps == [.send(.text(whole), after: .zero)])
        #expect(text.received(.text(message), limit: 999)?.steps == [.tooLarge(limit: 999)])

        // The JSON writer with a bound gives the bytes the unbounded one gives, and is bounded too.
        let json = try Self.script(yaml, "/json")
        let members = (0..<10).map { "\"m\($0)\":\"ab\"" }.joined(separator: ",")
        #expect(
            json.received(.text("ab"), limit: .max)?.steps == [
                .send(.text("{\(members),\"n\":\"#ab#\"}"), after: .zero)
            ])
        #expect(json.received(.text(message), limit: 999)?.steps == [.tooLarge(limit: 999)])

        // The messages of one event count together.
        let two = try Self.script(yaml, "/two")
        #expect(two.received(.text(message), limit: 200)?.steps.count == 2)
        #expect(two.received(.text(message), limit: 199)?.steps == [.tooLarge(limit: 199)])

        // The opening's templates read the upgrade request, which the client chooses too.
        let open = try Self.script(yaml, "/open", headers: [("X-Big", String(repeating: "h", count: 100))])
        #expect(open.opened(limit: 1000).count == 1)
        #expect(open.opened(limit: 999) == [.tooLarge(limit: 999)])
    }

    @Test("a 1 MB message answered by a template repeating it 1,000 times closes 1011 without growing memory")
    func amplificationThroughKakapo() async throws {
        let file = try Fixtures.temporaryDirectory() + "/routes.yaml"
        try Self.amplifying(1000).write(toFile: file, atomically: true, encoding: .utf8)
        let process = try KakapoProcess(["serve", "--routes", file, "--port", "0"])
        let port = try await process.waitUntilListening()
        let client = try await WebSocketClient.connect(port: port, path: "/text")
        #expect(client.handshake.status == 101)
        try client.send(text: String(repeating: "a", count: 1 << 20))
        let close = try #require(await client.closeFrame(timeout: .seconds(30)))
        #expect(close.code == 1011)
        #expect(close.reason == "the route's reply would be larger than 67108864 bytes", "\(close.reason)")
        #expect(!client.events.contains { if case .message = $0 { true } else { false } })
        // Without the bound the reply was 1 GiB (3 GB of memory); with it at most the 64 MiB limit is built.
        let peak = try #require(process.memory?.peak)
        #expect(peak < 400 << 20, "peak resident memory \(peak >> 20) MiB")

        // A reply within the limit still goes out whole.
        let echo = try await WebSocketClient.connect(port: port, path: "/two")
        try echo.send(text: "hi")
        #expect(await echo.nextMessage()?.text == "hi")
        #expect(await echo.nextMessage()?.text == "hi")
        try echo.close()
        #expect(await echo.waitForDisconnect())

        process.send(SIGINT)
        #expect(try await process.waitForExit() == 0)
        #expect(
            process.standardError.contains("would be larger than 67108864 bytes in all"), "\(process.standardError)")
    }
}
