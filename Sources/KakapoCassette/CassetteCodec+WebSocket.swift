import Foundation
import KakapoHTTP
import KakapoJSON

/// An upgrade interaction's `"websocket"`: the subprotocol, the messages in order (`from`, `offsetMs`, and
/// `text` or `base64`) and the close (`from`, `code`, `reason`, `offsetMs`), documented in cassettes/README.md.
extension CassetteCodec {
    static func encode(_ conversation: WebSocketConversation) -> JSONValue {
        var object: JSONObject = [:]
        if let subprotocol = conversation.subprotocol { object["subprotocol"] = .string(subprotocol) }
        object["messages"] = .array(conversation.messages.map(encode))
        if let close = conversation.close {
            var entry: JSONObject = ["from": .string(close.from.rawValue)]
            entry["code"] = close.code.map { .number(JSONNumber($0)) } ?? .null
            entry["reason"] = .string(close.reason)
            if let offset = close.offsetMilliseconds {
                entry["offsetMs"] = .number(JSONNumber(literal: formatMilliseconds(offset)))
            }
            object["close"] = .object(entry)
        }
        return .object(object)
    }

    private static func encode(_ message: WebSocketMessage) -> JSONValue {
        var entry: JSONObject = [
            "from": .string(message.from.rawValue),
            "offsetMs": .number(JSONNumber(literal: formatMilliseconds(message.offsetMilliseconds))),
        ]
        switch message.payload {
        case .text(let text): entry["text"] = .string(text)
        case .binary(let bytes): entry["base64"] = .string(Data(bytes).base64EncodedString())
        }
        return .object(entry)
    }

    /// Reads `"websocket"` at `path`; `status` is the interaction's response status, which must be 101.
    static func decodeConversation(_ value: JSONValue, status: Int, at path: [JSONPathComponent])
        throws(CassetteDecodingError) -> WebSocketConversation
    {
        guard status == 101 else {
            throw CassetteDecodingError(
                path: path,
                message: "\"websocket\" belongs to an upgrade answered 101 (Switching Protocols), not \(status)")
        }
        let object = try self.object(value, at: path)
        var conversation = WebSocketConversation()
        if let subprotocol = object["subprotocol"], !subprotocol.isNull {
            let text = try string(subprotocol, at: path + [.key("subprotocol")])
            guard !text.isEmpty, text.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: ",") }) else {
                throw CassetteDecodingError(
                    path: path + [.key("subprotocol")],
                    message: "\"subprotocol\" must be a token such as \"chat\" (visible ASCII, no commas)")
            }
            conversation.subprotocol = text
        }
        if let list = object["messages"] {
            let listPath = path + [.key("messages")]
            guard let entries = list.arrayValue else {
                throw CassetteDecodingError(
                    path: listPath, message: "\"messages\" must be an array, found \(list.kindDescription)")
            }
            var previous = 0.0
            conversation.messages.reserveCapacity(entries.count)
            for (index, entry) in entries.enumerated() {
                let message = try decodeMessage(entry, at: listPath + [.index(index)], after: previous)
                previous = message.offsetMilliseconds
                conversation.messages.append(message)
            }
        }
        if let close = object["close"], !close.isNull {
            conversation.close = try decodeClose(close, at: path + [.key("close")])
        }
        return conversation
    }

    private static func decodeMessage(_ value: JSONValue, at path: [JSONPathComponent], after previous: Double)
        throws(CassetteDecodingError) -> WebSocketMessage
    {
        let object = try self.object(value, at: path)
        let from = try sender(object["from"], at: path)
        guard let offset = object["offsetMs"]?.numberValue.flatMap(milliseconds) else {
            throw CassetteDecodingError(
                path: path,
                message:
                    "a message needs \"offsetMs\", a number of milliseconds from 0 to \(largestMilliseconds) (a week)")
        }
        // Messages are played in file order at their offsets: one earlier than the message before would be
        // sent late, after messages that follow it.
        guard offset >= previous else {
            throw CassetteDecodingError(
                path: path + [.key("offsetMs")],
                message:
                    "\"offsetMs\" must be no earlier than the message before (\(formatMilliseconds(previous))), not \(formatMilliseconds(offset))"
            )
        }
        let payload: WebSocketMessage.Payload
        switch (object["text"], object["base64"]) {
        case (let text?, nil):
            payload = .text(try string(text, at: path + [.key("text")]))
        case (nil, let base64?):
            let encoded = try string(base64, at: path + [.key("base64")])
            guard let data = Data(base64Encoded: encoded) else {
                throw CassetteDecodingError(path: path + [.key("base64")], message: "\"base64\" is not valid base64")
            }
            payload = .binary(Array(data))
        case (.some, .some):
            throw CassetteDecodingError(
                path: path, message: "a message has \"text\" (a text message) or \"base64\" (a binary one), not both")
        case (nil, nil):
            throw CassetteDecodingError(
                path: path, message: "a message needs \"text\" (a text message) or \"base64\" (a binary one)")
        }
        return WebSocketMessage(from: from, offsetMilliseconds: offset, payload: payload)
    }

    private static func decodeClose(_ value: JSONValue, at path: [JSONPathComponent])
        throws(CassetteDecodingError) -> WebSocketClose
    {
        let object = try self.object(value, at: path)
        let from = try sender(object["from"], at: path)
        var code: Int?
        if let value = object["code"], !value.isNull {
            guard let number = value.numberValue?.intValue, WebSocketClose.isSendable(number) else {
                throw CassetteDecodingError(
                    path: path + [.key("code")],
                    message:
                        "\"code\" must be a close code from 1000 to 4999 that may be sent (not 1004, 1005, 1006 or 1015), or null for none"
                )
            }
            code = number
        }
        var reason = ""
        if let value = object["reason"], !value.isNull {
            reason = try string(value, at: path + [.key("reason")])
            guard reason.utf8.count <= WebSocketClose.largestReasonBytes else {
                throw CassetteDecodingError(
                    path: path + [.key("reason")],
                    message:
                        "\"reason\" holds \(reason.utf8.count) bytes; a close frame carries at most \(WebSocketClose.largestReasonBytes)"
                )
            }
            guard code != nil || reason.isEmpty else {
                throw CassetteDecodingError(
                    path: path + [.key("reason")], message: "a close without a \"code\" cannot carry a \"reason\"")
            }
        }
        var offset: Double?
        if let value = object["offsetMs"], !value.isNull {
            guard let milliseconds = value.numberValue.flatMap(milliseconds) else {
                throw CassetteDecodingError(
                    path: path + [.key("offsetMs")],
                    message: "\"offsetMs\" must be a number of milliseconds from 0 to \(largestMilliseconds) (a week)")
            }
            offset = milliseconds
        }
        return WebSocketClose(from: from, code: code, reason: reason, offsetMilliseconds: offset)
    }

    private static func sender(_ value: JSONValue?, at path: [JSONPathComponent]) throws(CassetteDecodingError)
        -> WebSocketMessage.Sender
    {
        guard let text = value?.stringValue, let sender = WebSocketMessage.Sender(rawValue: text) else {
            throw CassetteDecodingError(
                path: path + [.key("from")], message: "\"from\" must be \"client\" or \"server\"")
        }
        return sender
    }
}
