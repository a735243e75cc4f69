import KakapoJSON

extension MissReport {
    /// The longest difference a line shows; past it, it is cut with `…`.
    static let differenceLimit = 300
    /// The longest URL a line shows.
    static let urlLimit = 1024

    /// The miss in one line, with the nearest recording and its first difference: `POST /graphql query
    /// GetUser: variables /id: 7 here, 1 recorded (interaction 0)`, `GET /x: nothing recorded comes close`.
    /// The log, the summary and (as `message`) the miss body and a gRPC miss's `grpc-message` all say it.
    public var line: String {
        let text = Self.head(method: method, url: url, label: label)
        guard let first = nearest.first else { return text + ": nothing recorded comes close" }
        let more = first.differences.count - 1
        let also = more > 0 ? ", and \(more) more difference\(more == 1 ? "" : "s")" : ""
        return text + ": " + Self.cut(first.differences.first ?? "", at: Self.differenceLimit)
            + " (interaction \(first.position)\(also))"
    }

    /// The line as an error message for whoever reads the body: `kakapo: no recording matches LINE`.
    public var message: String { Self.message(line) }

    /// `kakapo: no recording matches LINE`.
    public static func message(_ line: String) -> String { "kakapo: no recording matches " + line }

    /// `METHOD url LABEL`, the URL cut at `urlLimit`.
    public static func head(method: String, url: String, label: String?) -> String {
        "\(method) \(cut(url, at: urlLimit))" + (label.map { " " + $0 } ?? "")
    }

    /// The `error` member of a miss body, in the shape API SDKs (OpenAI, Anthropic, Stripe, Google) turn into
    /// their exception text: `{"message": ..., "type": "kakapo_miss", "code": "kakapo_miss"}`.
    public static func errorJSON(message: String) -> JSONValue {
        .object(["message": .string(message), "type": "kakapo_miss", "code": "kakapo_miss"])
    }

    static func cut(_ text: String, at limit: Int) -> String {
        text.count > limit ? text.prefix(limit) + "…" : text
    }

    /// For a recording of the same GraphQL document as the request with another operation chosen, its body
    /// differences with the operation's said as `operationName: First here, Second recorded`; nil for any
    /// other pair (another document, a batch, not GraphQL).
    static func otherOperationChosen(recorded: ComparableBody, live: ComparableBody, lines: [String]) -> [String]? {
        guard case .graphQL(_, let recordedRequest) = recorded, case .graphQL(_, let liveRequest) = live,
            !recordedRequest.isBatch, !liveRequest.isBatch, recordedRequest.operations.count == 1,
            liveRequest.operations.count == 1,
            recordedRequest.operations[0].document.normalized == liveRequest.operations[0].document.normalized
        else { return nil }
        return lines.map { line in
            line.hasPrefix("operation: ") ? "operationName: " + line.dropFirst("operation: ".count) : line
        }
    }
}
