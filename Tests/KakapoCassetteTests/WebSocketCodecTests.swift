import KakapoCassette
import KakapoHTTP
import KakapoTestSupport
import Testing

/// An upgrade interaction's `"websocket"`: written, read back, and every malformed part refused with its place.
@Suite("WebSocket conversations in the cassette")
struct WebSocketCodecTests {
    static let conversation = WebSocketConversation(
        subprotocol: "chat",
        messages: [
            WebSocketMessage(from: .server, offsetMilliseconds: 0, payload: .text("welcome")),
            WebSocketMessage(from: .client, offsetMilliseconds: 12.5, payload: .text(#"{"type":"hello","id":1}"#)),
            WebSocketMessage(from: .server, offsetMilliseconds: 40, payload: .binary([0, 1, 2, 255])),
        ],
        close: WebSocketClose(from: .server, code: 1000, reason: "bye", offsetMilliseconds: 41))

    static let interaction = Interaction(
        request: HTTP.Request(
            method: .get, target: "/chat", headers: ["Upgrade": "websocket", "Connection": "Upgrade"]),
        response: HTTP.Response(status: 101, headers: ["Upgrade": "websocket", "Sec-WebSocket-Protocol": "chat"]),
        recordedAt: "2026-11-24T08:00:00.000Z", durationMilliseconds: 3, webSocket: conversation)

    @Test("a conversation is written after the response, text as text and binary as base64, and read back the same")
    func roundTrip() throws {
        let bytes = CassetteCodec.encodeFile(Cassette(interactions: [Self.interaction]))
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(text.contains(#""from": "client""#), "\(text)")
        #expect(text.contains(#""offsetMs": 12.5"#), "\(text)")
        #expect(text.contains(#""base64": "AAEC/w==""#), "\(text)")
        #expect(text.contains(#""subprotocol": "chat""#), "\(text)")
        #expect(text.contains(#""code": 1000"#), "\(text)")
        #expect(try CassetteFile.decode(bytes, file: "ws.json").interactions == [Self.interaction])

        // No close and no subprotocol: both absent; a close without a code keeps null.
        var open = Self.interaction
        open.webSocket = WebSocketConversation(messages: Self.conversation.messages)
        let openBytes = CassetteCodec.encodeFile(Cassette(interactions: [open]))
        #expect(!String(decoding: openBytes, as: UTF8.self).contains("close"))
        #expect(try CassetteFile.decode(openBytes, file: "open.json").interactions == [open])
        var bare = Self.interaction
        bare.webSocket?.close = WebSocketClose(from: .client, code: nil)
        #expect(
            try CassetteFile.decode(CassetteCodec.encodeFile(Cassette(interactions: [bare])), file: "bare.json")
                .interactions == [bare])
    }

    @Test("a malformed conversation is refused with its line and the path to the offending value")
    func refusals() throws {
        func cassette(status: Int = 101, _ websocket: String) -> [UInt8] {
            Array(
                """
                {"version": 1, "interactions": [{"request": {"method": "GET", "url": "/chat"},
                "response": {"status": \(status)},
                "websocket": \(websocket)}]}
                """.utf8)
        }
        let cases: [(Int, String, String, String)] = [
            (200, #"{"messages": []}"#, "/websocket", "belongs to an upgrade answered 101"),
            (101, #"[]"#, "/websocket", "expected an object"),
            (101, #"{"messages": {}}"#, "/websocket/messages", "\"messages\" must be an array"),
            (
                101, #"{"messages": [{"offsetMs": 1, "text": "a"}]}"#, "/websocket/messages/0/from",
                "\"client\" or \"server\""
            ),
            (101, #"{"messages": [{"from": "client", "text": "a"}]}"#, "/websocket/messages/0", "needs \"offsetMs\""),
            (
                101, #"{"messages": [{"from": "client", "offsetMs": -1, "text": "a"}]}"#, "/websocket/messages/0",
                "needs \"offsetMs\""
            ),
            (
                101, #"{"messages": [{"from": "client", "offsetMs": 1e300, "text": "a"}]}"#, "/websocket/messages/0",
                "a week"
            ),
            (
                101,
                #"{"messages": [{"from": "client", "offsetMs": 5, "text": "a"}, {"from": "server", "offsetMs": 4, "text": "b"}]}"#,
                "/websocket/messages/1/offsetMs", "no earlier than the message before"
            ),
            (101, #"{"messages": [{"from": "client", "offsetMs": 1}]}"#, "/websocket/messages/0", "needs \"text\""),
            (
                101, #"{"messages": [{"from": "client", "offsetMs": 1, "text": "a", "base64": "AA=="}]}"#,
                "/websocket/messages/0", "not both"
            ),
            (
                101, #"{"messages": [{"from": "client", "offsetMs": 1, "base64": "%%"}]}"#,
                "/websocket/messages/0/base64", "not valid base64"
            ),
            (
                101, #"{"messages": [{"from": "client", "offsetMs": 1, "text": 7}]}"#, "/websocket/messages/0/text",
                "expected a string"
            ),
            (101, #"{"subprotocol": "a b"}"#, "/websocket/subprotocol", "must be a token"),
            (101, #"{"close": {"from": "server", "code": 1005}}"#, "/websocket/close/code", "may be sent"),
            (101, #"{"close": {"from": "server", "code": 70000}}"#, "/websocket/close/code", "1000 to 4999"),
            (101, #"{"close": {"from": "nobody", "code": 1000}}"#, "/websocket/close/from", "\"client\" or \"server\""),
            (
                101, #"{"close": {"from": "server", "code": 1000, "reason": "\#(String(repeating: "é", count: 62))"}}"#,
                "/websocket/close/reason", "at most 123"
            ),
            (101, #"{"close": {"from": "server", "reason": "why"}}"#, "/websocket/close/reason", "without a \"code\""),
        ]
        for (status, websocket, path, message) in cases {
            #expect {
                try CassetteFile.decode(cassette(status: status, websocket), file: "bad.json")
            } throws: { error in
                let text = "\(error)"
                return text.contains(message) && text.contains(path) && text.contains("bad.json:")
            }
        }
    }

    @Test("a recording whose close the reader would refuse is not written (the cassette stays loadable)")
    func admission() throws {
        var odd = Self.interaction
        odd.webSocket?.close = WebSocketClose(from: .server, code: 1006, reason: "")
        let directory = try Fixtures.temporaryDirectory()
        #expect(throws: CassetteError.self) {
            try CassetteFile.save(Cassette(interactions: [odd]), to: directory + "/odd.json")
        }
    }
}
