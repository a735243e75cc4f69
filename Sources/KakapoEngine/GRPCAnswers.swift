import KakapoGRPC
import KakapoHTTP
import KakapoJSON

/// What Kakapo answers a gRPC call itself, in gRPC's terms: HTTP 200 with `grpc-status` and `grpc-message`
/// in the trailers, so a gRPC client reports a status and its text rather than a protocol error. A miss is
/// NOT_FOUND with the miss report; an error of Kakapo's (the upstream unreachable: 502, 504) the status the
/// gRPC spec maps its HTTP status to (UNAVAILABLE for those).
enum GRPCAnswers {
    /// The miss answer to a gRPC call: `grpc-status: 5` with `report` (the JSON a miss answers other requests
    /// with) told in one line as `grpc-message`: its `message` (the miss line) first, so a message cut at
    /// `GRPC.largestMessageBytes` still says it, then the mode and every nearest recording.
    static func miss(report: JSONValue) -> Answer {
        Answer(response: GRPC.errorResponse(status: .notFound, message: summary(of: report)), source: .miss)
    }

    /// `answer` as a gRPC call gets it: one of Kakapo's own errors (source `error`, not already gRPC) becomes
    /// a gRPC status, a Trailers-Only answer gets its status as trailers; every other answer is left as it is.
    static func converting(_ answer: Answer, for request: HTTP.Request) -> Answer {
        if let trailersOnly = trailersOnly(answer) { return trailersOnly }
        guard answer.source == .error, GRPC.isGRPC(request),
            case .response(let status, let headers, .bytes(let body)) = answer.outcome,
            !GRPC.isGRPC(contentType: headers["Content-Type"])
        else { return answer }
        var message = String(decoding: body, as: UTF8.self)
        if let parsed = try? JSONParser.parse(body),
            let text = parsed.objectValue?["error"]?.stringValue ?? parsed["error"]?["message"]?.stringValue
        {
            message = text
        }
        let response = GRPC.errorResponse(
            status: GRPCStatus(httpStatus: status), message: "kakapo: \(message) (HTTP \(status))")
        var converted = answer
        converted.outcome = .response(status: response.status, headers: response.headers, body: .bytes([]))
        converted.trailers = response.trailers
        return converted
    }

    /// A Trailers-Only answer from the upstream (its status among the headers of its one HEADERS frame, as
    /// gRPC servers fail a call before any message) with the status moved to the trailers: passed on with its
    /// status in the headers and an empty body after them, a gRPC client sees a stream that ended without
    /// trailers ("Stream removed"). Nothing follows such a head, so a live body becomes an empty one (the
    /// recording still completes with the transfer). Nil for every other answer.
    private static func trailersOnly(_ answer: Answer) -> Answer? {
        guard case .response(let status, let headers, let body) = answer.outcome, headers[GRPC.statusField] != nil,
            GRPC.isGRPC(contentType: headers["Content-Type"])
        else { return nil }
        let moved = GRPC.movingOutcomeToTrailers(
            HTTP.Response(status: status, headers: headers, trailers: answer.trailers))
        var converted = answer
        switch body {
        case .live: converted.outcome = .response(status: status, headers: moved.headers, body: .bytes([]))
        default: converted.outcome = .response(status: status, headers: moved.headers, body: body)
        }
        converted.trailers = moved.trailers
        return converted
    }

    /// `completion` for `request`: for a gRPC call, one that converts Kakapo's own errors first
    /// (`converting(_:for:)`); for any other request, `completion` itself.
    static func converting(_ completion: @escaping @Sendable (Answer) -> Void, for request: HTTP.Request)
        -> @Sendable (Answer) -> Void
    {
        guard GRPC.isGRPC(request) else { return completion }
        return { completion(converting($0, for: request)) }
    }

    /// The miss report in one line: its message (the miss line), the mode, and the nearest recordings with
    /// what differed (`kakapo: no recording matches POST /demo.Greeter/SayHello (gRPC): gRPC message 1 field
    /// /name differs (interaction 0); mode none; nearest: ...`).
    static func summary(of report: JSONValue) -> String {
        guard let object = report.objectValue else {
            return String(decoding: JSONWriter().write(report), as: UTF8.self)
        }
        var text = object["message"]?.stringValue ?? "kakapo: no recording matches this call"
        if let mode = object["mode"]?.stringValue { text += "; mode \(mode)" }
        if let cassette = object["cassette"]?.stringValue { text += "; cassette \(cassette)" }
        let nearest = object["nearest"]?.arrayValue ?? []
        if !nearest.isEmpty {
            let lines = nearest.compactMap { candidate -> String? in
                guard let entry = candidate.objectValue else { return nil }
                var line =
                    "interaction \(entry["interaction"].map { String(decoding: JSONWriter().write($0), as: UTF8.self) } ?? "?")"
                if let method = entry["method"]?.stringValue, let url = entry["url"]?.stringValue {
                    line += " (\(method) \(url))"
                }
                let differences = entry["differences"]?.arrayValue?.compactMap(\.stringValue) ?? []
                if !differences.isEmpty { line += ": " + differences.joined(separator: ", ") }
                return line
            }
            text += "; nearest: " + lines.joined(separator: "; ")
        }
        return text
    }
}
