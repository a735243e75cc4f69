/// Declarative routes (routes files and the admin API), right after the Swift routes.
enum StubLayer: PipelineLayer {
    static func step(_ exchange: inout Exchange, in pipeline: RequestPipeline) -> LayerStep {
        guard pipeline.stubs.hasRoutes, let answer = pipeline.stubs.answer(exchange.request) else { return .pass }
        if let problem = answer.problem {
            // The client gets a 500 saying why; the person running Kakapo sees it here.
            let request = exchange.request
            pipeline.logger.warning(
                "route \(answer.route) could not answer \(request.method) \(request.path): \(problem)")
        }
        return .now(Answer(answer))
    }
}
