import KakapoCassette
import KakapoHTTP
import KakapoWebSocket

/// Plays a recorded WebSocket conversation: the `101` names the recorded subprotocol when the client offers
/// it, and each connection gets a `WebSocketConversationSide` that plays the recording in order.
package enum WebSocketReplay {
    /// The play for `conversation`, recorded with the upgrade `recorded`, answering the upgrade `request`.
    static func play(
        _ conversation: WebSocketConversation, recorded: HTTP.Request, for request: HTTP.Request,
        in pipeline: RequestPipeline
    ) -> WebSocketPlay {
        let configuration = pipeline.configuration
        let url = configuration.redactor.redactedURL(of: request)
        var subprotocol: String?
        if let chosen = conversation.subprotocol {
            let offered = request.offeredWebSocketSubprotocols
            if let answered = answeredSubprotocol(recorded: chosen, offered: offered) {
                subprotocol = answered
            } else if !offered.isEmpty {
                // RFC 6455 4.2.2: a server names only a subprotocol the client offered, so none.
                pipeline.logger.warning(
                    "\(request.method) \(url): the recorded WebSocket subprotocol \(chosen) was not offered (\(offered.joined(separator: ", "))): answered with none"
                )
            }
        }
        let match = WebSocketMessageMatch(
            matching: configuration.matching, redactor: configuration.redactor, handshake: request)
        let timing = configuration.streamTiming
        let counts = conversation.counts
        return WebSocketPlay(
            subprotocol: subprotocol,
            description:
                "recorded conversation of \(request.method) \(url) (\(counts.client) messages from the client, \(counts.server) from the server)"
        ) {
            WebSocketConversationSide(conversation, timing: timing, match: match)
        }
    }

    /// The subprotocol to answer for the recorded `chosen`: itself when the client offered it; when recording
    /// redacted a token in it (`auth.[REDACTED]`), the first offered one it matches with each placeholder
    /// standing for at least one character (`auth.eyJ...`), since a client refuses a `101` naming a
    /// subprotocol it did not offer; nil when none fits.
    package static func answeredSubprotocol(recorded chosen: String, offered: [String]) -> String? {
        if offered.contains(chosen) { return chosen }
        let parts = chosen.split(separator: Redactor.placeholder, omittingEmptySubsequences: false).map(String.init)
        guard parts.count > 1 else { return nil }
        return offered.first { matches($0, parts: parts) }
    }

    /// Whether `text` is `parts` in order with at least one character between each two: the first a prefix,
    /// the last a suffix, the middle ones found left to right (the leftmost fit is as good as any).
    private static func matches(_ text: String, parts: [String]) -> Bool {
        guard let first = parts.first, let last = parts.last, text.hasPrefix(first) else { return false }
        var rest = Substring(text.dropFirst(first.count))
        for part in parts.dropFirst().dropLast() {
            // At least one character of the secret before the next part.
            guard !rest.isEmpty, let found = rest.dropFirst().firstRange(of: part) else { return false }
            rest = rest[found.upperBound...]
        }
        return rest.count > last.count && rest.hasSuffix(last)
    }
}
