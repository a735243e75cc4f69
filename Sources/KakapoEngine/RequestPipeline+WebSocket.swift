import KakapoHTTP
import KakapoWebSocket

extension RequestPipeline {
    /// A client message that a conversation Kakapo plays did not expect (`WebSocketAction.miss`): logged as a
    /// warning and journaled as a miss of the upgrade's URL, so the summary lists it and `--strict` fails.
    /// Verification does not count it: the upgrade itself was journaled (and counted) when it was answered.
    package func webSocketMiss(_ request: HTTP.Request, _ description: String) {
        let url = configuration.redactor.redactedURL(of: request)
        logger.warning("\(request.method) \(url): WebSocket miss: \(description)")
        // 1008, the close code the miss ends with, stands where an HTTP status would.
        journal.append(
            .init(method: request.method.rawValue, url: url, status: 1008, source: .miss, milliseconds: 0),
            target: request.target, counted: false)
    }
}
