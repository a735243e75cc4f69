import KakapoHTTP
import KakapoJSON

/// `/__kakapo/*`: health, the request journal, and the attached stores (dump and reset). Answers only
/// clients on loopback, or, when an admin token is configured, only requests that carry it.
enum AdminEndpoints {
    static let prefix = "/__kakapo/"

    static func answer(_ request: HTTPRequest, fromLoopback: Bool, pipeline: RequestPipeline) -> ProxyAnswer {
        if let token = pipeline.configuration.adminToken {
            guard request.headers["Authorization"] == "Bearer " + token else {
                return ProxyAnswer(
                    response: .json(
                        ["error": "the admin endpoints need Authorization: Bearer <admin token>"], status: 401),
                    source: .admin)
            }
        } else if !fromLoopback {
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
        case (.get, "/__kakapo/store"):
            let stores = pipeline.resources.attached.map { $0.snapshot() }
            return ProxyAnswer(response: .json(["stores": .array(stores)], status: 200), source: .admin)
        case (.delete, "/__kakapo/store"):
            let stores = pipeline.resources.attached
            for store in stores { store.reset() }
            return ProxyAnswer(
                response: .json(["reset": .number(JSONNumber(stores.count))], status: 200), source: .admin)
        default:
            return ProxyAnswer(
                response: .json(
                    [
                        "error": .string("no admin endpoint \(request.method) \(request.path)"),
                        "endpoints": [
                            "GET /__kakapo/health", "GET /__kakapo/requests", "GET /__kakapo/store",
                            "DELETE /__kakapo/store",
                        ],
                    ], status: 404), source: .admin)
        }
    }
}
