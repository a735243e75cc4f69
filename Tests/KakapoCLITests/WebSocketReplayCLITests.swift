import Foundation
import KakapoTestSupport
import Testing

/// `kakapo replay` playing recorded WebSocket conversations: the built binary, a real client.
@Suite("Command line: WebSocket replay")
struct WebSocketReplayCLITests {
    static let conversation = """
        {"version": 1, "interactions": [
          {"request": {"method": "GET", "url": "/prices", "headers": [["Upgrade", "websocket"], ["Connection", "Upgrade"]]},
           "response": {"status": 101, "headers": []},
           "websocket": {"messages": [
             {"from": "client", "offsetMs": 0, "text": "{\\"subscribe\\": \\"KKP\\", \\"price\\": 11}"},
             {"from": "server", "offsetMs": 400, "text": "{\\"price\\": 11.5}"}],
            "close": {"from": "server", "code": 1000, "reason": "market closed", "offsetMs": 800}}}]}
        """

    @Test(
        "--strict exits 0 after a conversation that matched and 1 after one that did not, whose miss the log and the summary name"
    )
    func strictMisses() async throws {
        let cassette = try Fixtures.temporaryDirectory() + "/prices.json"
        try Self.conversation.write(toFile: cassette, atomically: true, encoding: .utf8)
        for (message, expected) in [
            (#"{"price": 11.0, "subscribe": "KKP"}"#, Int32(0)), (#"{"subscribe": "KKP", "price": 12}"#, 1),
        ] {
            let process = try KakapoProcess([
                "replay", "--cassette", cassette, "--port", "0", "--strict", "--stream-timing", "4x",
            ])
            let client = try await WebSocketClient.connect(
                port: try await process.waitUntilListening(), path: "/prices")
            #expect(client.handshake.status == 101)
            let sent = ContinuousClock.now
            try client.send(text: message)
            let close = try #require(await client.closeFrame())
            if expected == 0 {
                let reply = client.events.compactMap { event -> WebSocketClient.Message? in
                    if case .message(let message) = event { return message }
                    return nil
                }
                #expect(reply.map(\.text) == [#"{"price": 11.5}"#])
                // 400 ms recorded, four times as fast: 100 ms.
                #expect(reply.first.map { ($0.arrived - sent) >= .milliseconds(100) } == true)
                #expect(close.code == 1000)
                #expect(close.reason == "market closed")
            } else {
                #expect(close.code == 1008)
                #expect(close.reason == "message 1 from the client differs at /price: 12 here, 11 recorded")
            }
            try? client.close()
            _ = await client.waitForDisconnect()
            process.send(SIGINT)
            #expect(try await process.waitForExit() == expected, "\(process.standardError)")
            if expected == 1 {
                #expect(
                    process.standardError.contains(
                        "GET /prices: WebSocket miss: message 1 from the client differs at /price: 12 here, 11 recorded"
                    ),
                    "\(process.standardError)")
                #expect(process.standardError.contains("miss: GET /prices"), "\(process.standardError)")
            }
        }
    }

    @Test("a conversation recorded through kakapo record replays with the upstream stopped")
    func recordThenReplay() async throws {
        let echo = try await WebSocketEchoServer.start()
        let cassette = try Fixtures.temporaryDirectory() + "/echo.json"
        let recorder = try KakapoProcess(["record", "--upstream", echo.baseURL, "--cassette", cassette, "--port", "0"])
        let recording = try await WebSocketClient.connect(
            port: try await recorder.waitUntilListening(), path: "/chat")
        #expect(recording.handshake.status == 101)
        for text in ["one", "two"] {
            try recording.send(text: text)
            #expect(await recording.nextMessage()?.text == "echo: \(text)")
        }
        try recording.close(code: 1000, reason: "done")
        _ = await recording.closeFrame()
        _ = await recording.waitForDisconnect()
        recorder.send(SIGINT)
        #expect(try await recorder.waitForExit() == 0, "\(recorder.standardError)")
        await echo.stop()

        let replayer = try KakapoProcess(["replay", "--cassette", cassette, "--port", "0", "--strict"])
        let client = try await WebSocketClient.connect(port: try await replayer.waitUntilListening(), path: "/chat")
        #expect(client.handshake.status == 101)
        for text in ["one", "two"] {
            try client.send(text: text)
            #expect(await client.nextMessage()?.text == "echo: \(text)")
        }
        try client.close(code: 1000, reason: "done")
        #expect(await client.closeFrame()?.code == 1000)
        #expect(await client.waitForDisconnect())
        replayer.send(SIGINT)
        #expect(try await replayer.waitForExit() == 0, "\(replayer.standardError)")
    }
}
