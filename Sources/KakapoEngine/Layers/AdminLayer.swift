import Dispatch

/// `/__kakapo/*`: the admin API (`AdminEndpoints`), first of all layers.
enum AdminLayer: PipelineLayer {
    static func step(_ exchange: inout Exchange, in pipeline: RequestPipeline) -> LayerStep {
        let request = exchange.request
        guard RequestPipeline.isAdmin(request) else { return .pass }
        let fromLoopback = exchange.fromLoopback
        // The page's files are in memory: answered at once.
        if let page = InspectorEndpoints.pageFile(request, fromLoopback: fromLoopback, pipeline: pipeline) {
            return .now(page)
        }
        if let (queue, later) = AdminEndpoints.sessionAnswer(request, fromLoopback: fromLoopback, pipeline: pipeline) {
            return .later { reply in queue.async { reply(later()) } }
        }
        if let later = AdminEndpoints.sharedStoreAnswer(request, fromLoopback: fromLoopback, pipeline: pipeline) {
            return .later { reply in Task { reply(await later()) } }
        }
        // Off the caller's thread (an event loop): health counts the cassette's interactions, which waits
        // for the recordings handed to its recorder.
        return .later { reply in
            DispatchQueue.global().async {
                reply(AdminEndpoints.answer(request, fromLoopback: fromLoopback, pipeline: pipeline))
            }
        }
    }
}
