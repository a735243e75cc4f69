import Foundation
import KakapoCassette
import KakapoHTTP
import KakapoJSON

/// A WebSocket conversation in HAR, as Chrome DevTools writes it (devtools-frontend
/// `front_end/models/har/Log.ts`): the upgrade's entry has `"_resourceType": "websocket"` and
/// `"_webSocketMessages": [{"type": "send"|"receive", "time": SECONDS, "opcode": 1|2, "data": ...}]`, where
/// `time` is wall-clock seconds since 1970 with a fraction and `data` is the text of a text message (opcode 1)
/// or the base64 of a binary one (opcode 2), as the DevTools protocol's `WebSocketFrame.payloadData` says.
/// Chrome writes no close; Kakapo adds `"_webSocketClose": {"from", "code", "reason", "time"}` so that a round
/// trip keeps it. The subprotocol travels in the 101's `Sec-WebSocket-Protocol` header.
enum HARWebSocket {
    /// `entry`'s WebSocket members for `conversation`; `start` is the entry's `startedDateTime` (the 101),
    /// from which the offsets count.
    static func add(_ conversation: WebSocketConversation, start: Date, to entry: inout JSONObject) {
        let base = start.timeIntervalSince1970
        entry["_resourceType"] = "websocket"
        entry["_webSocketMessages"] = .array(
            conversation.messages.map { message in
                let data: String
                let opcode: Int
                switch message.payload {
                case .text(let text): (data, opcode) = (text, 1)
                case .binary(let bytes): (data, opcode) = (Data(bytes).base64EncodedString(), 2)
                }
                return [
                    "type": message.from == .client ? "send" : "receive",
                    "time": .number(JSONNumber(base + message.offsetMilliseconds / 1000)),
                    "opcode": .number(JSONNumber(opcode)),
                    "data": .string(data),
                ]
            })
        if let close = conversation.close {
            var object: JSONObject = ["from": .string(close.from.rawValue)]
            object["code"] = close.code.map { .number(JSONNumber($0)) } ?? .null
            object["reason"] = .string(close.reason)
            if let offset = close.offsetMilliseconds { object["time"] = .number(JSONNumber(base + offset / 1000)) }
            entry["_webSocketClose"] = .object(object)
        }
    }

    /// The conversation of a HAR entry: nil when it has no `_webSocketMessages` (and no `_webSocketClose`).
    /// The entry must have answered 101; `start` is its `startedDateTime` (nil when it has none: the first
    /// message's time stands in). Messages of other types (Chrome's `error`) or opcodes (control frames) are
    /// skipped, times out of order are raised to the message before's, and everything a cassette refuses is
    /// refused here, at its path.
    static func read(
        _ entry: HARImport.Node, status: Int, headers: HTTP.Headers, start: Date?, report: inout HARImportReport
    ) throws -> WebSocketConversation? {
        let list = entry.optional("_webSocketMessages")
        let closeNode = entry.optional("_webSocketClose")
        guard list != nil || closeNode != nil else { return nil }
        guard status == 101 else {
            // A socket that never opened (Chrome lists it with status 0 or the refusal): its request is kept.
            report.note("_webSocketMessages ignored, the entry's status is not 101")
            return nil
        }
        var conversation = WebSocketConversation()
        if let chosen = headers["Sec-WebSocket-Protocol"]?.trimmingSpaces(), !chosen.isEmpty {
            guard isToken(chosen) else {
                throw HARImport.Failure(
                    path: entry.path + [.key("response"), .key("headers")],
                    message: "Sec-WebSocket-Protocol must be one subprotocol such as \"chat\", not \"\(chosen)\"")
            }
            conversation.subprotocol = chosen
        }
        var base = start?.timeIntervalSince1970
        var previous = 0.0
        var skipped = false
        var late = false
        for node in try list?.array() ?? [] {
            let type = try node.member("type").string()
            guard type == "send" || type == "receive" else {
                skipped = true
                continue
            }
            let opcodeNode = try node.member("opcode")
            let opcode = try opcodeNode.integer()
            guard opcode == 1 || opcode == 2 else {
                skipped = true
                continue
            }
            let timeNode = try node.member("time")
            let time = try timeNode.number()
            var offset = try milliseconds(time, after: &base, at: timeNode)
            if offset < previous {
                offset = previous
                late = true
            }
            previous = offset
            let dataNode = try node.member("data")
            let data = try dataNode.string()
            let payload: WebSocketMessage.Payload
            if opcode == 1 {
                payload = .text(data)
            } else {
                guard let bytes = Data(base64Encoded: data) else {
                    throw dataNode.failure("expected the base64 of a binary message (opcode 2)")
                }
                payload = .binary(Array(bytes))
            }
            conversation.messages.append(
                WebSocketMessage(
                    from: type == "send" ? .client : .server, offsetMilliseconds: offset, payload: payload))
        }
        if skipped { report.note("WebSocket frames other than text and binary messages skipped") }
        if late { report.note("WebSocket messages out of time order played at the time of the message before") }
        if let closeNode { conversation.close = try close(closeNode, base: &base) }
        return conversation
    }

    /// `_webSocketClose`: `{"from": "client"|"server", "code": 1000 or null, "reason": "...", "time": SECONDS}`.
    private static func close(_ node: HARImport.Node, base: inout Double?) throws -> WebSocketClose {
        let fromNode = try node.member("from")
        guard let from = WebSocketMessage.Sender(rawValue: try fromNode.string()) else {
            throw fromNode.failure("expected \"client\" or \"server\"")
        }
        var code: Int?
        if let codeNode = node.optional("code") {
            let value = try codeNode.integer()
            guard WebSocketClose.isSendable(value) else {
                throw codeNode.failure(
                    "expected a close code from 1000 to 4999 that may be sent (not 1004, 1005, 1006 or 1015), not \(value)"
                )
            }
            code = value
        }
        let reasonNode = node.optional("reason")
        let reason = try reasonNode?.string() ?? ""
        if let reasonNode {
            guard reason.utf8.count <= WebSocketClose.largestReasonBytes else {
                throw reasonNode.failure(
                    "the reason holds \(reason.utf8.count) bytes; a close frame carries at most \(WebSocketClose.largestReasonBytes)"
                )
            }
            guard code != nil || reason.isEmpty else {
                throw reasonNode.failure("a close without a code has no reason")
            }
        }
        var offset: Double?
        if let timeNode = node.optional("time") {
            offset = try milliseconds(try timeNode.number(), after: &base, at: timeNode)
        }
        return WebSocketClose(from: from, code: code, reason: reason, offsetMilliseconds: offset)
    }

    /// Milliseconds from `base` (seconds since 1970; set to `time` when nil) to `time`, checked before any
    /// arithmetic: finite, not before the start, at most a week after it.
    private static func milliseconds(_ time: Double, after base: inout Double?, at node: HARImport.Node) throws
        -> Double
    {
        // 1e300 seconds would overflow into infinity once made milliseconds; the range check comes first.
        guard time.isFinite, time >= 0, time < 1e12 else {
            throw node.failure("expected a time in seconds since 1970, not \(time)")
        }
        let start = base ?? time
        base = start
        let seconds = time - start
        guard seconds >= 0 else {
            throw node.failure("expected a time no earlier than the entry's startedDateTime (\(start)), not \(time)")
        }
        let milliseconds = seconds * 1000
        guard milliseconds <= Double(CassetteCodec.largestMilliseconds) else {
            throw node.failure(
                "expected a time at most a week (\(CassetteCodec.largestMilliseconds) ms) after the entry's startedDateTime, not \(seconds) s"
            )
        }
        return milliseconds
    }

    /// Whether `text` is one subprotocol token, as a cassette stores it (visible ASCII, no commas).
    private static func isToken(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: ",") }
    }
}
