import KakapoWebSocket

/// Declarative routes (routes files and the admin API), right after the Swift routes.
enum StubLayer: PipelineLayer {
    static func step(_ exchange: inout Exchange, in pipeline: RequestPipeline) -> LayerStep {
        let request = exchange.request
        let cassette = exchange.cassette
        guard pipeline.stubs.hasRoutes,
            let answer = pipeline.stubs.answer(request, recordedAt: { cassette?.recordedAt(of: request) })
        else { return .pass }
        if let problem = answer.problem {
            // The client gets a 500 saying why; the person running Kakapo sees it here.
            pipeline.logger.warning(
                "route \(answer.route) could not answer \(request.method) \(request.path): \(problem)")
        }
        if let script = answer.webSocket {
            // A websocket route took the upgrade: Kakapo answers 101 (after the route's latency) and plays
            // the script, one side per connection.
            let logger = pipeline.logger
            let limit = pipeline.configuration.maximumRequestBodyBytes
            let play = WebSocketPlay(subprotocol: script.subprotocol, description: "route \(answer.route)") {
                WebSocketScriptSide(script, logger: logger, maximumMessageBytes: limit)
            }
            var scripted = Answer(.webSocket(.play(play)), source: .route)
            scripted.delay = answer.delay
            return .now(scripted)
        }
        return .now(Answer(answer))
    }
}
