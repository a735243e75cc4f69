import Kakapo

/// How `kakapo cassette show` prints a WebSocket conversation.
extension CassetteCommand.Show {
    /// `websocket (chat): 3 from the client, 5 from the server, 2.4 s, closed 1000 by the server`.
    static func summary(of conversation: WebSocketConversation) -> String {
        let (client, server) = conversation.counts
        var text = "websocket"
        if let subprotocol = conversation.subprotocol { text += " (\(subprotocol))" }
        text += ": \(client) from the client, \(server) from the server, "
        text += duration(conversation.durationMilliseconds)
        if let close = conversation.close {
            text += ", closed" + (close.code.map { " \($0)" } ?? " without a code") + " by the \(close.from.rawValue)"
            if !close.reason.isEmpty { text += " (\(quote(close.reason)))" }
        } else {
            text += ", no close recorded"
        }
        return text
    }

    /// One line per message and one for the close: `-> 12.5 ms  {"type":"hello"}`, `<- 40 ms  <4 bytes binary>`
    /// (`->` from the client, `<-` from the server).
    static func lines(of conversation: WebSocketConversation) -> [String] {
        var lines = conversation.messages.map { message in
            let text: String
            switch message.payload {
            case .text(let value): text = quote(value)
            case .binary(let bytes): text = "<\(bytes.count) bytes binary>"
            }
            return arrow(message.from) + " " + milliseconds(message.offsetMilliseconds) + "  " + text
        }
        if let close = conversation.close {
            let time = close.offsetMilliseconds.map { " " + milliseconds($0) } ?? ""
            lines.append(
                arrow(close.from) + time + "  close" + (close.code.map { " \($0)" } ?? "")
                    + (close.reason.isEmpty ? "" : " " + quote(close.reason)))
        }
        return lines
    }

    private static func arrow(_ sender: WebSocketMessage.Sender) -> String { sender == .client ? "->" : "<-" }

    /// `850 ms` below a second, `2.4 s` from there.
    private static func duration(_ milliseconds: Double) -> String {
        milliseconds < 1000 ? self.milliseconds(milliseconds) : "\((milliseconds / 100).rounded() / 10) s"
    }

    /// `12.5 ms`, `40 ms`: to a tenth, as a cassette stores offsets.
    private static func milliseconds(_ value: Double) -> String {
        // Cassettes hold 0 to a week; a value built otherwise must still print, never trap in Int(_:).
        guard value.isFinite, abs(value) < 1e15 else { return "? ms" }
        let rounded = (value * 10).rounded() / 10
        return rounded == rounded.rounded() ? "\(Int(rounded)) ms" : "\(rounded) ms"
    }

    /// The first 60 characters of a text, on one line (control characters as `\n`, `\t`, `\u{1b}`).
    private static func quote(_ text: String) -> String {
        var result = ""
        for (count, character) in text.enumerated() {
            guard count < 60 else {
                result += "…"
                break
            }
            if character.isNewline || character.asciiValue.map({ $0 < 0x20 || $0 == 0x7F }) == true {
                result += character.unicodeScalars.map { $0.escaped(asASCII: false) }.joined()
            } else {
                result.append(character)
            }
        }
        return result
    }
}
