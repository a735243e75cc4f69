import KakapoCassette
import KakapoHTTP
import KakapoJSON

extension InspectorEndpoints {
    /// Why the request `record` holds cannot be saved to a cassette; nil when it can.
    static func saveRefusal(_ record: InspectorRecord, pipeline: RequestPipeline) -> String? {
        if let saved = record.saved {
            return "already saved to \(saved.cassette) as interaction \(saved.interaction)"
        }
        let source = record.event.source
        if source == "recorded" { return "already recorded into the cassette when it was answered" }
        guard source == ResponseSource.upstream.rawValue || source == ResponseSource.passthrough.rawValue else {
            return
                "only a live exchange (answered by the upstream, source upstream or passthrough) can be saved; this one was answered by \(source)"
        }
        if record.event.webSocket { return "a WebSocket conversation cannot be saved from the inspector (record it)" }
        if record.event.stream { return "a streamed answer cannot be saved from the inspector (record it)" }
        guard let detail = record.detail, let response = detail.response, let body = response.body else {
            return "its detail is no longer held"
        }
        // A body streamed upstream as it arrived (passthrough) was never held: the request has none here.
        let request = detail.request
        if request.body.isEmpty,
            request.headers["Transfer-Encoding"] != nil
                || (request.headers["Content-Length"].flatMap { Int($0) } ?? 0) > 0
        {
            return "its request body went upstream as it arrived and was not kept"
        }
        guard detail.requestBody.isWhole, body.isWhole else {
            return
                "its request or response body was larger than \(InspectorRecord.bodyLimit) bytes and was not kept whole"
        }
        if let id = record.event.session {
            guard let session = pipeline.sessions?.session(id) else { return "its cassette session \(id) has ended" }
            guard session.mode.records else {
                return
                    "its cassette session \(id) does not record (mode \(session.mode.rawValue)); open it in a mode that records"
            }
        } else if pipeline.session == nil {
            return "there is no cassette to write to: start kakapo with --cassette FILE"
        }
        return nil
    }

    /// `POST /__kakapo/requests/{id}/save`: records a live exchange as `kakapo record` would (redacted by the
    /// cassette's recorder), into its session's cassette or the server's, and answers once it is in the
    /// cassette's journal (so it survives kill -9, and shutdown folds it into the file). In a mode that does
    /// not record, the server's cassette starts saving on the first save.
    static func save(_ id: Int, pipeline: RequestPipeline) -> HTTP.Response {
        guard let record = pipeline.inspector.record(id) else {
            return .error("request \(id) is no longer held", status: 404)
        }
        if let why = saveRefusal(record, pipeline: pipeline) { return .error("cannot save: \(why)", status: 409) }
        guard let detail = record.detail, let kept = detail.response, let body = kept.body else {
            return .error("request \(id) is no longer held", status: 404)
        }
        let cassette: CassetteSession
        let name: String
        if let id = record.event.session, let session = pipeline.sessions?.session(id) {
            cassette = session.cassette
            name = session.name
        } else if let session = pipeline.session {
            if !pipeline.configuration.mode.records {
                do {
                    try pipeline.startSavingForInspector()
                } catch {
                    return .error("cannot save: \(error)", status: 409)
                }
            }
            cassette = session
            name = session.path
        } else {
            return .error("cannot save: there is no cassette to write to", status: 409)
        }
        // The request as it went upstream, as `UpstreamLayer` records it.
        var request = detail.request
        request.headers.remove(name: "X-Kakapo-Session")
        request.headers.remove(name: "Proxy-Authorization")
        request.target = request.target.escapingRawBytes()
        let prepared = pipeline.upstream?.prepare(request) ?? request
        let interaction = Interaction(
            request: prepared, response: HTTP.Response(status: kept.status, headers: kept.headers, body: body.bytes),
            recordedAt: InspectorEvent.timestamp(record.event.milliseconds1970),
            durationMilliseconds: record.event.duration)
        // Recordings are appended after what the file holds: this is its position, unless another recording
        // is handed over at the same moment.
        let position = cassette.interactionCount
        guard pipeline.inspector.markSaved(id, cassette: name, interaction: position) else {
            return .error("cannot save: request \(id) was saved already, or is no longer held", status: 409)
        }
        cassette.record(interaction, replacing: false)
        return .json(["cassette": .string(name), "interaction": .number(JSONNumber(position))], status: 201)
    }
}
