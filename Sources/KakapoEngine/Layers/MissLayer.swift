import Dispatch
import KakapoGRPC
import KakapoJSON

/// The last layer: a miss, answered with the miss status and a report of the nearest recordings.
enum MissLayer: PipelineLayer {
    static func step(_ exchange: inout Exchange, in pipeline: RequestPipeline) -> LayerStep {
        guard exchange.cassette != nil else { return .now(miss(exchange, in: pipeline)) }
        // Off the caller's thread: the report's search is bounded (`MissReport.comparedLimit`), but on a
        // large cassette still too long for an event loop, and misses answered one at a time on their own
        // queue never hold back hits.
        let exchange = exchange
        return .later { reply in pipeline.missQueue.async { reply(miss(exchange, in: pipeline)) } }
    }

    /// The miss answer for `exchange`: the report from its cassette (with its session's id and name), or
    /// what is missing when there is no cassette.
    static func miss(_ exchange: Exchange, in pipeline: RequestPipeline) -> Answer {
        var body: JSONValue
        if let testSession = exchange.testSession {
            body = testSession.cassette.missReport(for: exchange.request).json
            testSession.noteMiss(body)
            if case .object(var object) = body {
                object["session"] = .string(testSession.id)
                object["cassette"] = .string(testSession.name)
                body = .object(object)
            }
        } else if let cassette = exchange.cassette {
            body = cassette.missReport(for: exchange.request).json
        } else {
            body = .object([
                "error": "no cassette is loaded and no upstream is configured",
                "request": .object([
                    "method": .string(exchange.request.method.rawValue),
                    "url": .string(pipeline.configuration.redactor.redactedURL(of: exchange.request)),
                ]),
            ])
        }
        if case .object(var object) = body {
            object["mode"] = .string(exchange.mode.rawValue)
            body = .object(object)
        }
        // A gRPC client reads a status, not a JSON body: NOT_FOUND with the report as its message.
        if GRPC.isGRPC(exchange.request) { return GRPCAnswers.miss(report: body) }
        return Answer(response: .json(body, status: pipeline.configuration.missStatus), source: .miss)
    }
}
