import Foundation
import Kakapo
import KakapoTestSupport
import Testing

/// WebSocket conversations in HAR, in Chrome DevTools' format. `Fixtures/chrome-websocket.har` is written by
/// hand field for field as DevTools writes one (devtools-frontend `front_end/models/har/Log.ts`, `Entry.build`:
/// `_resourceType`, and `_webSocketMessages` of `{type, time, opcode, data}` taken from the request's frames,
/// `time` in wall-clock seconds; an `error` frame has opcode -1; `data` is the Chrome DevTools Protocol's
/// `Network.WebSocketFrame.payloadData`: the text for opcode 1, base64 otherwise).
@Suite("HAR: WebSocket conversations")
struct HARWebSocketTests {
    static let conversation = WebSocketConversation(
        subprotocol: "chat",
        messages: [
            WebSocketMessage(from: .server, offsetMilliseconds: 0, payload: .text("welcome")),
            WebSocketMessage(from: .client, offsetMilliseconds: 12.5, payload: .text(#"{"type":"hello","id":1}"#)),
            WebSocketMessage(from: .server, offsetMilliseconds: 40.3, payload: .binary([0, 1, 2, 255])),
            WebSocketMessage(from: .server, offsetMilliseconds: 2400.1, payload: .text("tick")),
        ],
        close: WebSocketClose(from: .server, code: 1000, reason: "bye", offsetMilliseconds: 2401.7))

    static let upgrade = Interaction(
        request: HTTP.Request(
            method: .get, target: "/chat?room=1",
            headers: HTTP.Headers([
                ("Host", "ws.test:8080"), ("Upgrade", "websocket"), ("Connection", "Upgrade"),
                ("Sec-WebSocket-Protocol", "chat, superchat"),
            ])),
        response: HTTP.Response(
            status: 101,
            headers: HTTP.Headers([
                ("Upgrade", "websocket"), ("Connection", "Upgrade"), ("Sec-WebSocket-Protocol", "chat"),
            ])),
        recordedAt: "2026-11-24T08:00:00.123Z", durationMilliseconds: 3, webSocket: conversation)

    static func entry(_ document: JSONValue) throws -> JSONObject {
        try #require(document.objectValue?["log"]?.objectValue?["entries"]?.arrayValue?.first?.objectValue)
    }

    @Test("export writes Chrome's _webSocketMessages: send and receive, epoch seconds, opcode 1 text and 2 base64")
    func export() throws {
        let entry = try Self.entry(HARExport.document(Cassette(interactions: [Self.upgrade])))
        #expect(entry["_resourceType"] == "websocket")
        #expect(entry["request"]?.objectValue?["url"] == "ws://ws.test:8080/chat?room=1")
        let messages = try #require(entry["_webSocketMessages"]?.arrayValue)
        #expect(messages.count == 4)
        let start = try #require(Self.upgrade.recordedDate).timeIntervalSince1970
        for (message, recorded) in zip(messages, Self.conversation.messages) {
            let object = try #require(message.objectValue)
            #expect(object["type"] == (recorded.from == .client ? "send" : "receive"))
            let time = try #require(object["time"]?.numberValue?.doubleValue)
            #expect(abs(time - (start + recorded.offsetMilliseconds / 1000)) < 1e-6)
        }
        #expect(messages[1].objectValue?["opcode"] == 1)
        #expect(messages[1].objectValue?["data"] == #"{"type":"hello","id":1}"#)
        #expect(messages[2].objectValue?["opcode"] == 2)
        #expect(messages[2].objectValue?["data"] == "AAEC/w==")
        let close = try #require(entry["_webSocketClose"]?.objectValue)
        #expect(close["from"] == "server" && close["code"] == 1000 && close["reason"] == "bye")
        // An entry that is no upgrade has none of it.
        let plain = Interaction(
            request: HTTP.Request(method: .get, target: "/", headers: ["Host": "a.test"]),
            response: HTTP.Response(status: 200), recordedAt: "", durationMilliseconds: 1)
        let plainEntry = try Self.entry(HARExport.document(Cassette(interactions: [plain])))
        #expect(plainEntry["_webSocketMessages"] == nil && plainEntry["_resourceType"] == nil)
    }

    @Test("cassette to HAR to cassette gives the same conversation, offsets to 0.1 ms, close and subprotocol kept")
    func roundTrip() throws {
        var secure = Self.upgrade
        secure.request.origin = "https://ws.test"
        secure.webSocket?.subprotocol = "chat"
        // A subprotocol the headers do not state (a cassette edited by hand) is written to the 101's headers.
        secure.response.headers.remove(name: "Sec-WebSocket-Protocol")
        var open = Self.upgrade
        open.webSocket?.close = nil
        open.webSocket?.subprotocol = nil
        open.response.headers.remove(name: "Sec-WebSocket-Protocol")
        let bytes = HARExport.bytes(Cassette(interactions: [Self.upgrade, secure, open]))
        #expect(String(decoding: bytes, as: UTF8.self).contains("wss://ws.test/chat?room=1"))
        let (again, report) = try HARImport.read(bytes, file: "round.har")
        #expect(report.isEmpty, "\(report.lines)")
        for (imported, original) in zip(again.interactions, [Self.upgrade, secure, open]) {
            let conversation = try #require(imported.webSocket)
            let expected = try #require(original.webSocket)
            #expect(conversation.subprotocol == expected.subprotocol)
            #expect(conversation.close?.from == expected.close?.from)
            #expect(conversation.close?.code == expected.close?.code)
            #expect(conversation.close?.reason == expected.close?.reason)
            #expect(
                abs((conversation.close?.offsetMilliseconds ?? 0) - (expected.close?.offsetMilliseconds ?? 0)) < 0.1)
            #expect(conversation.messages.map(\.payload) == expected.messages.map(\.payload))
            #expect(conversation.messages.map(\.from) == expected.messages.map(\.from))
            for (message, recorded) in zip(conversation.messages, expected.messages) {
                #expect(abs(message.offsetMilliseconds - recorded.offsetMilliseconds) < 0.1)
            }
        }
        #expect(again.interactions[1].request.origin == "https://ws.test")
        // Through the cassette file, which stores offsets to 0.1 ms, the conversation is exactly the original.
        let reloaded = try CassetteFile.decode(
            CassetteCodec.encodeFile(Cassette(interactions: [again.interactions[0]])), file: "again.json")
        #expect(reloaded.interactions[0].webSocket == Self.conversation)
    }

    @Test("a Chrome HAR: wss URL, subprotocol from the 101, text and base64 messages, the error frame skipped")
    func chrome() throws {
        let path = HARTests.fixtures + "/chrome-websocket.har"
        let (cassette, report) = try HARImport.read(Array(try Data(contentsOf: URL(fileURLWithPath: path))), file: path)
        let upgrade = try #require(cassette.interactions.first)
        #expect(upgrade.request.origin == "https://stream.example.com")
        #expect(upgrade.request.target == "/v1/stream?room=lobby")
        #expect(upgrade.request.isWebSocketUpgrade)
        let conversation = try #require(upgrade.webSocket)
        #expect(conversation.subprotocol == "prices.v2")
        #expect(conversation.counts == (client: 2, server: 3))
        for (message, expected) in zip(conversation.messages, [12.345, 40.5, 100.25, 180.75, 2400.125]) {
            #expect(abs(message.offsetMilliseconds - expected) < 0.01, "\(message.offsetMilliseconds)")
        }
        #expect(conversation.messages[3].payload == .binary([0, 1, 2, 254, 255]))
        #expect(conversation.messages[0].payload == .text(#"{"type":"auth","token":"tok_live_7Hq2Zp9Xw4"}"#))
        #expect(conversation.close == nil)
        #expect(report.lines == ["1 response: WebSocket frames other than text and binary messages skipped"])
        // It is a cassette Kakapo writes and reads back.
        let bytes = CassetteCodec.encodeFile(cassette)
        #expect(try CassetteFile.decode(bytes, file: "chrome.json").interactions.first?.webSocket != nil)
    }

    /// One entry answered `status` with `members` spliced into it.
    static func har(status: Int = 101, _ members: String) -> [UInt8] {
        Array(
            """
            {"log": {"entries": [{"startedDateTime": "2026-11-24T08:00:00.000Z",
            "request": {"method": "GET", "url": "ws://a.test/s"},
            "response": {"status": \(status), "headers": []}, \(members)}]}}
            """.utf8)
    }

    static func error(_ bytes: [UInt8]) -> String? {
        do {
            _ = try HARImport.read(bytes, file: "ws.har")
            return nil
        } catch {
            return error.description
        }
    }

    @Test("hostile conversations are refused at their path: times, base64, close codes and reasons, the subprotocol")
    func hostile() throws {
        let start = 1_795_507_200.0  // 2026-11-24T08:00:00Z
        let cases: [(String, String)] = [
            (#""_webSocketMessages": [{"type": "send", "time": 1e400, "opcode": 1, "data": "a"}]"#, "time"),
            (#""_webSocketMessages": [{"type": "send", "time": -5, "opcode": 1, "data": "a"}]"#, "time"),
            (
                #""_webSocketMessages": [{"type": "send", "time": \#(start - 1), "opcode": 1, "data": "a"}]"#,
                "no earlier than the entry's startedDateTime"
            ),
            (
                #""_webSocketMessages": [{"type": "send", "time": \#(start + 700_000), "opcode": 1, "data": "a"}]"#,
                "at most a week"
            ),
            (#""_webSocketMessages": [{"type": "receive", "time": \#(start), "opcode": 2, "data": "***"}]"#, "base64"),
            (
                #""_webSocketMessages": [{"type": "send", "time": \#(start), "opcode": 1.5, "data": "a"}]"#,
                "whole number"
            ),
            (#""_webSocketMessages": [{"type": "send", "time": \#(start), "opcode": 1}]"#, "data: missing"),
            (#""_webSocketMessages": {"type": "send"}"#, "expected an array"),
            (#""_webSocketClose": {"from": "server", "code": 1005}"#, "close code from 1000 to 4999"),
            (#""_webSocketClose": {"from": "server", "code": 99999999999999999999}"#, "whole number"),
            (#""_webSocketClose": {"from": "nobody", "code": 1000}"#, "\"client\" or \"server\""),
            (
                #""_webSocketClose": {"from": "server", "code": 1000, "reason": "\#(String(repeating: "x", count: 124))"}"#,
                "at most 123"
            ),
            (#""_webSocketClose": {"from": "server", "reason": "why"}"#, "without a code"),
        ]
        for (members, expected) in cases {
            let message = Self.error(Self.har(members))
            #expect(message?.contains(expected) == true, "\(members): \(message ?? "imported")")
            #expect(message?.contains("ws.har:") == true, "\(message ?? "imported")")
        }
        let bad = Self.error(
            Array(
                """
                {"log": {"entries": [{"request": {"method": "GET", "url": "ws://a.test/s"},
                "response": {"status": 101, "headers": [{"name": "Sec-WebSocket-Protocol", "value": "a, b"}]},
                "_webSocketMessages": []}]}}
                """.utf8))
        #expect(bad?.contains("Sec-WebSocket-Protocol must be one subprotocol") == true, "\(bad ?? "imported")")
    }

    @Test(
        "messages on an entry that is not 101 are ignored and said so; control frames skipped; times out of order raised"
    )
    func tolerated() throws {
        let start = 1_795_507_200.0
        let (refused, refusedReport) = try HARImport.read(
            Self.har(
                status: 403, #""_webSocketMessages": [{"type": "send", "time": \#(start), "opcode": 1, "data": "a"}]"#),
            file: "ws.har")
        #expect(refused.interactions.first?.webSocket == nil)
        #expect(refusedReport.lines == ["1 response: _webSocketMessages ignored, the entry's status is not 101"])
        let (cassette, report) = try HARImport.read(
            Self.har(
                #""_webSocketMessages": [{"type": "receive", "time": \#(start + 0.5), "opcode": 1, "data": "a"},"#
                    + #"{"type": "receive", "time": \#(start + 0.6), "opcode": 9, "data": ""},"#
                    + #"{"type": "send", "time": \#(start + 0.2), "opcode": 1, "data": "b"},"#
                    + #"{"type": "error", "time": \#(start + 0.7), "opcode": -1, "data": "net::ERR"}]"#),
            file: "ws.har")
        let messages = try #require(cassette.interactions.first?.webSocket?.messages)
        #expect(messages.map(\.payload) == [.text("a"), .text("b")])
        #expect(messages.map(\.offsetMilliseconds) == [500, 500])
        #expect(report.lines.count == 2, "\(report.lines)")
    }
}
