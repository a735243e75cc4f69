import KakapoHTTP
import KakapoRecordFilter

/// Record filters (`--record-only`, `--passthrough`), in the modes that record, after routes and the Store
/// and before the cassette: a request the filter keeps out is forwarded and answered live (source
/// `passthrough`), never recorded and never answered from the cassette. Every other request passes on.
enum RecordFilterLayer: PipelineLayer {
    static func step(_ exchange: inout Exchange, in pipeline: RequestPipeline) -> LayerStep {
        guard keepsOut(exchange.request, mode: exchange.mode, in: pipeline) else { return .pass }
        return passedThrough(UpstreamLayer.forward(exchange.request, replacing: false, recording: nil, in: pipeline))
    }

    /// Whether the record filter keeps `request`, answered in `mode`, out of the cassette: one branch in the
    /// replay modes, and one more with no pattern.
    static func keepsOut(_ request: HTTP.Request, mode: ProxyMode, in pipeline: RequestPipeline) -> Bool {
        guard mode.records, !pipeline.configuration.recordFilter.isEmpty, let upstream = pipeline.upstream else {
            return false
        }
        return pipeline.configuration.recordFilter.passesThrough(request, upstream: upstream.url)
    }

    /// `step` (an upstream forward) with its upstream answers marked `passthrough`; failures stay errors.
    static func passedThrough(_ step: LayerStep) -> LayerStep {
        if case .now(var answer) = step, answer.source == .upstream {
            // A WebSocket tunnel, answered at once.
            answer.source = .passthrough
            return .now(answer)
        }
        guard case .later(let start) = step else { return step }
        return .later { reply in
            start { answer in
                var answer = answer
                if answer.source == .upstream { answer.source = .passthrough }
                reply(answer)
            }
        }
    }
}
