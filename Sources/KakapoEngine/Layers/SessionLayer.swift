/// Cassette sessions (`--cassette-dir`): a request that names an open session is answered from its
/// cassette, in its mode, with its Store; one that names an unknown session gets 404.
enum SessionLayer: PipelineLayer {
    static func step(_ exchange: inout Exchange, in pipeline: RequestPipeline) -> LayerStep {
        guard let sessions = pipeline.sessions else { return .pass }
        switch sessions.select(&exchange.request) {
        case .none:
            return .pass
        case .session(let session):
            // In flight from now until answered (the pipeline ends it), so the session neither expires
            // nor saves while the layers after this one work on the request.
            session.begin()
            exchange.testSession = session
            exchange.mode = session.mode
            exchange.cassette = session.cassette
            return .pass
        case .unknown(let id):
            return .now(.error(SessionRegistry.unknown(id), status: 404))
        }
    }
}
