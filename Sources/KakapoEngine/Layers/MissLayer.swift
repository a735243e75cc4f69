import Dispatch
import KakapoCassette
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
    /// what is missing when there is no cassette. Its line (`MissReport.line`) goes to the log (rate-limited,
    /// `MissLog`) and, through the answer, to the journal and the summary.
    static func miss(_ exchange: Exchange, in pipeline: RequestPipeline) -> Answer {
        var body: JSONValue
        let line: String
        if let testSession = exchange.testSession {
            let report = testSession.cassette.missReport(for: exchange.request)
            line = report.line
            body = report.json
            testSession.noteMiss(body, line: line)
            if case .object(var object) = body {
                object["session"] = .string(testSession.id)
                object["cassette"] = .string(testSession.name)
                body = .object(object)
            }
        } else if let cassette = exchange.cassette {
            let report = cassette.missReport(for: exchange.request)
            line = report.line
            body = report.json
        } else {
            let method = exchange.request.method.rawValue
            let url = pipeline.configuration.redactor.redactedURL(of: exchange.request)
            line =
                MissReport.head(method: method, url: url, label: RequestLabel.of(exchange.request))
                + ": no cassette is loaded and no upstream is configured"
            let message = MissReport.message(line)
            body = .object([
                "error": MissReport.errorJSON(message: message),
                "message": .string(message),
                "request": .object(["method": .string(method), "url": .string(url)]),
            ])
        }
        if case .object(var object) = body {
            object["mode"] = .string(exchange.mode.rawValue)
            body = .object(object)
        }
        pipeline.missLog.log(line, to: pipeline.logger)
        // A gRPC client reads a status, not a JSON body: NOT_FOUND with the line (then the report) as its
        // message.
        var answer =
            GRPC.isGRPC(exchange.request)
            ? GRPCAnswers.miss(report: body)
            : Answer(response: .json(body, status: pipeline.configuration.missStatus), source: .miss)
        answer.missLine = line
        return answer
    }
}
