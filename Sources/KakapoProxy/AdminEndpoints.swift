import KakapoHTTP
import KakapoJSON

/// `/__kakapo/*`: health and the request journal. Answers only clients on loopback.
enum AdminEndpoints {
    static let prefix = "/__kakapo/"

    static func answer(_ request: HTTPRequest, fromLoopback: Bool, pipeline: RequestPipeline) -> ProxyAnswer {
        guard fromLoopback else {
            return ProxyAnswer(
                response: .json(["error": "the admin endpoints answer only on loopback"], status: 403), source: .admin)
        }
        switch (request.method, request.path) {
        case (.get, "/__kakapo/health"):
            var body: JSONObject = ["status": "ok", "mode": .string(pipeline.configuration.mode.rawValue)]
            if let session = pipeline.session {
                body["cassette"] = .string(session.path)
                body["interactions"] = .number(JSONNumber(session.snapshot.interactions.count))
            }
            return ProxyAnswer(response: .json(.object(body), status: 200), source: .admin)
        case (.get, "/__kakapo/requests"):
            return ProxyAnswer(response: .json(pipeline.journal.json, status: 200), source: .admin)
        default:
            return ProxyAnswer(
                response: .json(
                    [
                        "error": .string("no admin endpoint \(request.method) \(request.path)"),
                        "endpoints": ["GET /__kakapo/health", "GET /__kakapo/requests"],
                    ], status: 404), source: .admin)
        }
    }
}
