import KakapoHTTP
import KakapoRouter

/// Swift route handlers (`Router`), run in a task of their own so the caller never waits for them.
enum RouteLayer: PipelineLayer {
    static func step(_ exchange: inout Exchange, in pipeline: RequestPipeline) -> LayerStep {
        guard pipeline.routes.hasRoutes, let match = pipeline.routes.match(exchange.request) else { return .pass }
        return run(match, for: exchange.request, source: .route)
    }

    /// Answers `request` with a matched handler, in a task.
    static func run(_ match: RouteMatch, for request: HTTP.Request, source: ResponseSource) -> LayerStep {
        .later { reply in
            Task { reply(Answer(response: await match.respond(to: request), source: source)) }
        }
    }
}
