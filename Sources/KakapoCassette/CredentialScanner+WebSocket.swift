import KakapoHTTP
import KakapoJSON

/// Credentials in a WebSocket conversation: each message, the subprotocol and the close reason that redaction
/// would change, named by the interaction and the message's index.
extension CredentialScanner {
    /// The most messages of one conversation reported one by one; the rest are counted in one finding, so a
    /// conversation that sends a token 100,000 times gives a readable report (and `lint` looks up the line of
    /// each finding in the file).
    static let largestMessageFindings = 20

    static func findings(
        in conversation: WebSocketConversation, redacted: WebSocketConversation, interaction position: Int,
        at base: [JSONPathComponent]
    ) -> [Finding] {
        var findings: [Finding] = []
        let path = base + [.key("websocket")]
        if conversation.subprotocol != redacted.subprotocol {
            findings.append(
                Finding(
                    path: path + [.key("subprotocol")],
                    message: "credential in the WebSocket subprotocol of interaction #\(position)"))
        }
        var reported = 0
        var more = 0
        for (index, (message, clean)) in zip(conversation.messages, redacted.messages).enumerated()
        where message.payload != clean.payload {
            guard reported < largestMessageFindings else {
                more += 1
                continue
            }
            reported += 1
            let messagePath = path + [.key("messages"), .index(index)]
            var text =
                "credential in WebSocket message \(index) (from the \(message.from.rawValue)) of interaction #\(position)"
            switch (message.payload, clean.payload) {
            case (.text(let before), .text(let after)):
                if hasBearerToken(String(decoding: before.utf8.prefix(1 << 20), as: UTF8.self)) {
                    text = "bearer token" + text.dropFirst("credential".count)
                }
                if let (member, _) = firstRedactedMember(Array(before.utf8), Array(after.utf8)) {
                    text += " at \(member)"
                }
                findings.append(Finding(path: messagePath + [.key("text")], message: text))
            default:
                findings.append(Finding(path: messagePath + [.key("base64")], message: text + " (binary)"))
            }
        }
        if more > 0 {
            findings.append(
                Finding(
                    path: path + [.key("messages")],
                    message: "credentials in \(more) more WebSocket messages of interaction #\(position)"))
        }
        if conversation.close?.reason != redacted.close?.reason {
            findings.append(
                Finding(
                    path: path + [.key("close"), .key("reason")],
                    message: "credential in the WebSocket close reason of interaction #\(position)"))
        }
        return findings
    }
}
