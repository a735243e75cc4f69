import KakapoResources

/// REST resources backed by the Store: typed resources (`StoreResources.add`), then routes files'
/// collections (a session's own Store when it has one).
enum ResourceLayer: PipelineLayer {
    static func step(_ exchange: inout Exchange, in pipeline: RequestPipeline) -> LayerStep {
        let resources = pipeline.resources
        if resources.registry.hasRoutes, let match = resources.registry.match(exchange.request) {
            return RouteLayer.run(match, for: exchange.request, source: .store)
        }
        switch (exchange.testSession?.store ?? resources).answerCollection(exchange.request) {
        case .now(let response)?:
            return .now(Answer(response: response, source: .store))
        case .later(let respond)?:
            return .later { reply in Task { reply(Answer(response: await respond(), source: .store)) } }
        case nil:
            return .pass
        }
    }
}
