import Foundation
import KakapoCassette
import KakapoHTTP
import KakapoJSON

extension InspectorEndpoints {
    /// `GET /__kakapo/cassette[?session=ID]`: the interactions loaded, which were played in this run, which
    /// are stale (`--max-age`), and those recorded in this run as far as the file holds them yet (never
    /// played: a recording run forwards); `GET /__kakapo/cassette/{n}`: one interaction in detail.
    static func cassette(_ request: HTTP.Request, pipeline: RequestPipeline) -> HTTP.Response {
        let sessionID = request.decodedQueryItems.first { $0.name == "session" }?.value
        let cassette: CassetteSession
        let mode: ProxyMode
        if let sessionID {
            guard let session = pipeline.sessions?.session(sessionID) else {
                return .error(SessionRegistry.unknown(String(sessionID.prefix(128))), status: 404)
            }
            cassette = session.cassette
            mode = session.mode
        } else {
            guard let session = pipeline.session else { return .error("no cassette is loaded", status: 404) }
            cassette = session
            mode = pipeline.configuration.mode
        }
        var interactions = cassette.snapshot.interactions
        let loaded = interactions.count
        // What this run recorded is in the file (folded within a second or so), not in memory.
        if cassette.recordedCount > 0,
            let file = try? CassetteFile.load(cassette.path, schema: cassette.matching.grpcSchema),
            file.interactions.count > interactions.count
        {
            interactions = file.interactions
        }
        let unusedLoaded = Set(cassette.unusedPositions)
        let unused = unusedLoaded.union(loaded..<max(loaded, interactions.count))
        let stale = stalePositions(interactions, own: sessionID == nil, pipeline: pipeline)
        let path = request.path
        if path.count > cassettePath.count {
            guard let position = number(path.dropFirst(cassettePath.count + 1)),
                interactions.indices.contains(position)
            else {
                return .error(
                    "the cassette has no interaction \(path.dropFirst(cassettePath.count + 1).prefix(32)) (it holds \(interactions.count), from 0)",
                    status: 404)
            }
            let (clean, _) = cassette.redactor.redact(interactions[position])
            var object: JSONObject = [
                "interaction": .number(JSONNumber(position)), "recordedAt": .string(clean.recordedAt),
                "used": .bool(!unused.contains(position)), "stale": .bool(stale.contains(position)),
                "request": InspectorDetail.request(
                    clean.request, size: clean.request.body.count,
                    url: cassette.redactor.redactedURL(of: clean.request),
                    target: cassette.redactor.redact(target: clean.request.target)),
                "response": InspectorDetail.response(
                    clean.response, size: clean.response.body.count, chunks: clean.chunks, live: false),
            ]
            if let conversation = clean.webSocket { object["webSocket"] = InspectorDetail.webSocket(conversation) }
            return .json(.object(object), status: 200)
        }
        let listed = interactions.enumerated().map { position, interaction -> JSONValue in
            let kind = interaction.webSocket != nil ? "websocket" : interaction.chunks != nil ? "stream" : "http"
            return [
                "interaction": .number(JSONNumber(position)), "method": .string(interaction.request.method.rawValue),
                "url": .string(cassette.redactor.redactedURL(of: interaction.request)),
                "status": .number(JSONNumber(interaction.response.status)),
                "recordedAt": .string(interaction.recordedAt), "used": .bool(!unused.contains(position)),
                "stale": .bool(stale.contains(position)), "kind": .string(kind),
                "responseBytes": .number(JSONNumber(interaction.response.body.count)),
            ]
        }
        return .json(
            [
                "cassette": .string(sessionID.flatMap { pipeline.sessions?.session($0)?.name } ?? cassette.path),
                "mode": .string(mode.rawValue),
                "maxAge": pipeline.configuration.maximumAge.map { .string(ProxySummary.describeAge($0)) } ?? .null,
                "interactions": .array(listed),
            ], status: 200)
    }

    /// The positions older than `--max-age`: worked out at start for the server's cassette, now for a
    /// session's.
    private static func stalePositions(_ interactions: [Interaction], own: Bool, pipeline: RequestPipeline) -> Set<Int>
    {
        if own { return pipeline.stalePositions }
        guard let maximumAge = pipeline.configuration.maximumAge else { return [] }
        let oldest = Date().addingTimeInterval(-maximumAge)
        var stale: Set<Int> = []
        for (position, interaction) in interactions.enumerated() {
            if let recorded = interaction.recordedDate, recorded < oldest { stale.insert(position) }
        }
        return stale
    }
}
