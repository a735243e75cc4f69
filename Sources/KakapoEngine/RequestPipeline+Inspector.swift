import KakapoHTTP

extension RequestPipeline {
    /// Journals an answered request: in the request journal, and, unless it is an admin request, in the
    /// inspector (its event and detail). Returns the URL as journaled (credentials redacted).
    @discardableResult
    package func journal(_ request: HTTP.Request, _ answer: Answer, milliseconds: Double) -> String {
        let url = configuration.redactor.redactedURL(of: request)
        var event = Self.inspectorEvent(request, answer, url: url, milliseconds: milliseconds)
        if answer.source == .admin {
            event.id = inspector.takeID()
        } else {
            event = inspector.append(InspectorRecord(event: event, request: request, answer: answer))
        }
        journal.append(
            .init(
                method: request.method.rawValue, url: url, status: answer.status, source: answer.source,
                milliseconds: milliseconds, event: event, missLine: answer.missLine), target: request.target)
        return url
    }

    /// The event of a request (its id given later), from what the request and answer hold: no formatting.
    static func inspectorEvent(_ request: HTTP.Request, _ answer: Answer, url: String, milliseconds: Double)
        -> InspectorEvent
    {
        let host: String
        var target = url
        if let origin = request.origin {
            host = RequestOrigin.authority(of: origin)
            target = String(url.utf8.dropFirst(origin.utf8.count)) ?? url
        } else {
            host = RequestJournal.bounded(request.headers["Host"] ?? "localhost")
        }
        var responseBytes: Int?
        var contentType: String?
        var stream = false
        var webSocket = false
        switch answer.outcome {
        case .response(_, let headers, let body):
            contentType = headers["Content-Type"]
            switch body {
            case .bytes(let bytes): responseBytes = bytes.count
            case .recorded(let chunks):
                responseBytes = chunks.reduce(0) { $0 + $1.bytes.count }
                stream = true
            case .live: stream = true
            }
        case .fault: responseBytes = 0
        case .webSocket: webSocket = true
        }
        return InspectorEvent(
            id: 0, milliseconds1970: InspectorEvent.now(), method: request.method.rawValue, origin: request.origin,
            host: host, target: RequestJournal.bounded(target), status: answer.status,
            source: answer.recorded && answer.source == .upstream ? "recorded" : answer.source.rawValue,
            duration: milliseconds, requestBytes: request.body.count, responseBytes: responseBytes,
            contentType: contentType, session: answer.session, interaction: answer.interaction, stream: stream,
            webSocket: webSocket)
    }
}

extension RequestPipeline {
    /// Starts saving the server's cassette for "save to cassette" in a mode that does not record (once): it
    /// takes the cassette's lock and journal as a recording does, and shutdown closes it.
    func startSavingForInspector() throws {
        try savesForInspector.withLock { started in
            guard !started, let session else { return }
            try session.startAutosave()
            started = true
        }
    }

    /// Whether the server's cassette must be closed at shutdown: it records, or the inspector saved to it.
    var savesCassette: Bool { configuration.mode.records || savesForInspector.withLock { $0 } }
}
