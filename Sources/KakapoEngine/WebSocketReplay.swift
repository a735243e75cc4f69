import KakapoCassette
import KakapoHTTP

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
            if offered.contains(chosen) {
                subprotocol = chosen
            } else if !offered.isEmpty {
                // RFC 6455 4.2.2: a server names only a subprotocol the client offered, so none.
                pipeline.logger.warning(
                    "\(request.method) \(url): the recorded WebSocket subprotocol \(chosen) was not offered (\(offered.joined(separator: ", "))): answered with none"
                )
            }
        }
        let match = WebSocketMessageMatch(matching: configuration.matching, redactor: configuration.redactor)
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

    /// The most bytes of a close frame's reason: a control frame carries 125, the code takes 2 (RFC 6455 5.5).
    package static let closeReasonBytes = 123

    /// `reason` cut to `closeReasonBytes` on a character boundary, so the close frame stays valid UTF-8.
    package static func closeReason(_ reason: String) -> String {
        guard reason.utf8.count > closeReasonBytes else { return reason }
        var end = reason.utf8.index(reason.utf8.startIndex, offsetBy: closeReasonBytes)
        while end > reason.utf8.startIndex && UTF8.isContinuation(reason.utf8[end]) {
            end = reason.utf8.index(before: end)
        }
        return String(reason.utf8[..<end]) ?? ""
    }
}
