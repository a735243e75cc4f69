import KakapoHTTP

extension RequestPipeline {
    /// A client message that a conversation Kakapo plays did not expect (`WebSocketAction.miss`): logged as a
    /// warning and journaled as a miss of the upgrade's URL, so the summary lists it and `--strict` fails.
    package func webSocketMiss(_ request: HTTP.Request, _ description: String) {
        let url = configuration.redactor.redactedURL(of: request)
        logger.warning("\(request.method) \(url): WebSocket miss: \(description)")
        journal(request, Answer.error(description, status: 1008, source: .miss), milliseconds: 0)
    }
}
