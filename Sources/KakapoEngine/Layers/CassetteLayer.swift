import Foundation
import KakapoCassette
import KakapoHTTP

/// Recorded interactions, in the modes that replay: a hit is answered as recorded (a `HEAD` from a `GET`
/// recording with its head only; a JSON-RPC answer with the ids of the live request, `JSONRPCReplay`; echoes
/// of the request's secrets with the live request's values, `EchoReplay`); a stale one is re-recorded where
/// the mode records.
enum CassetteLayer: PipelineLayer {
    static func step(_ exchange: inout Exchange, in pipeline: RequestPipeline) -> LayerStep {
        guard exchange.mode.replays, let cassette = exchange.cassette, let hit = cassette.play(exchange.request)
        else { return .pass }
        exchange.testSession?.noteReplay()
        if exchange.testSession == nil, pipeline.stalePositions.contains(hit.position) {
            // Too old: re-recorded where the mode records, replayed with a warning otherwise.
            if exchange.mode == .new, pipeline.upstream != nil {
                return UpstreamLayer.forward(exchange.request, replacing: true, recording: cassette, in: pipeline)
            }
            pipeline.staleReplays.withLock { _ = $0.insert(hit.position) }
        }
        if hit.interaction.request.method != exchange.request.method {
            // A HEAD answered from a GET recording (InteractionIndex.play).
            var head = headAnswer(from: hit.interaction, for: exchange.request)
            head.interaction = hit.position
            if !hit.byShape.isEmpty { head = saying(head, matchedByShape: hit.byShape) }
            movingTime(&head, recorded: hit.interaction, in: pipeline)
            return .now(head)
        }
        if let conversation = hit.interaction.webSocket {
            // A recorded WebSocket conversation, played by the transport (WebSocketReplay); a request that
            // is no upgrade cannot take part in one.
            guard exchange.request.isWebSocketUpgrade else {
                return .now(
                    .error(
                        "the recording of \(exchange.request.method) \(exchange.request.path) is a WebSocket conversation: connect with a WebSocket client",
                        status: 426))
            }
            var play = WebSocketReplay.play(
                conversation, recorded: hit.interaction.request, for: exchange.request, in: pipeline)
            if let testSession = exchange.testSession {
                // The session's summary lists a message miss as it lists a request that missed.
                let method = exchange.request.method.rawValue
                let url = pipeline.configuration.redactor.redactedURL(of: exchange.request)
                play.onMiss = { description in
                    testSession.noteMiss(
                        ["request": ["method": .string(method), "url": .string(url)], "nearest": []],
                        line: "\(method) \(url): WebSocket miss: \(description)")
                }
            }
            return .now(Answer(.webSocket(.play(play)), source: .cassette))
        }
        var response = hit.interaction.response
        var decoded = false
        if hit.interaction.chunks == nil,
            let identity = ContentCoding.identityResponse(
                response, for: exchange.request, recorded: hit.interaction.request)
        {
            // A client that does not accept the recorded gzip or deflate gets the body decoded.
            response = identity
            decoded = true
        }
        var answer = Answer(
            .response(
                status: response.status, headers: response.headers,
                body: hit.interaction.chunks.map { .recorded($0) } ?? .bytes(response.body)),
            source: .cassette)
        answer.breaksOff = hit.interaction.brokenOff
        answer.holdsOpen = hit.interaction.abandoned && !hit.interaction.brokenOff
        answer.trailers = response.trailers
        answer.interaction = hit.position
        var rewritten = JSONRPCReplay.answer(answer, to: exchange.request, recorded: hit.interaction.request)
        if hit.echoes,
            let given = EchoReplay.answer(
                rewritten ?? answer, to: exchange.request, sources: hit.interaction.echoSources,
                redactor: cassette.redactor)
        {
            rewritten = given
        }
        if var rewritten {
            if !hit.byShape.isEmpty { rewritten = saying(rewritten, matchedByShape: hit.byShape) }
            // The recorded answer with the live request's JSON-RPC ids or echoed values: its bytes are this
            // request's alone, so it has no replay position and the transport prepares it afresh.
            movingTime(&rewritten, recorded: hit.interaction, in: pipeline)
            return .now(rewritten)
        }
        if !hit.byShape.isEmpty {
            // Says which values the request was matched by shape on: these headers are this answer's alone.
            answer = saying(answer, matchedByShape: hit.byShape)
        } else if exchange.testSession == nil, !decoded {
            // Only the server's own cassette: a session's positions are its own, and sessions come and go.
            // A decoded answer is not the recorded bytes, which the transport keeps prepared by position.
            answer.replay = hit.position
        }
        movingTime(&answer, recorded: hit.interaction, in: pipeline)
        return .now(answer)
    }

    /// The header that says a request matched its recording by shape, and on which values:
    /// `X-Kakapo-Matched-By: shape; body /nonce, query ts` (at most 16 places and 1 KB named).
    static let matchedByHeader = "X-Kakapo-Matched-By"

    /// `answer` with `X-Kakapo-Matched-By` naming `places`.
    static func saying(_ answer: Answer, matchedByShape places: [String]) -> Answer {
        guard case .response(let status, var headers, let body) = answer.outcome else { return answer }
        let named = places.prefix(16).joined(separator: ", ") + (places.count > 16 ? ", ..." : "")
        // Names come from the request (a decoded query name may hold a line break): visible ASCII only, and short.
        let visible = String(
            decoding: named.utf8.prefix(1_024).map { (0x20...0x7E).contains($0) ? $0 : 0x3F }, as: UTF8.self)
        headers.replaceOrAdd(name: matchedByHeader, value: "shape; " + visible)
        var copy = answer
        copy.outcome = .response(status: status, headers: headers, body: body)
        return copy
    }

    /// Moves the recorded times of `answer` to now (`ReplayTime`): its head, and its body when it is whole.
    /// An answer kept prepared by position is then kept for this second only (`Answer.replaySecond`), and
    /// its times are moved once a second (`RequestPipeline.movedReplies`).
    static func movingTime(_ answer: inout Answer, recorded interaction: Interaction, in pipeline: RequestPipeline) {
        let time = pipeline.configuration.replayTime
        guard case .response(let status, let headers, let body) = answer.outcome, time.mayMove(headers) else {
            return
        }
        let now = WallClock.seconds
        var bytes: [UInt8]?
        if case .bytes(let whole) = body { bytes = whole }
        func move() -> (headers: HTTP.Headers, body: [UInt8]?)? {
            time.moved(headers: headers, body: bytes, recordedAt: interaction.recordedAt, now: now)
        }
        // A replay as recorded (`answer.replay`) is the same for every request of a second.
        guard let moved = answer.replay.map({ pipeline.movedReplies.value($0, second: now, make: move) }) ?? move()
        else { return }
        answer.outcome = .response(status: status, headers: moved.headers, body: moved.body.map { .bytes($0) } ?? body)
        answer.replaySecond = now
    }

    /// The answer to `request`, a `HEAD`, from a `GET` recording: its status and headers, with the
    /// `Content-Length` the `GET` replay would state to the same client (the recorded one, else the body's;
    /// the decoded body's for a client that does not accept the recorded gzip or deflate), and no body; a
    /// recorded stream keeps no length, as its `GET` replay has none.
    static func headAnswer(from interaction: Interaction, for request: HTTP.Request) -> Answer {
        var response = interaction.response
        if interaction.chunks == nil,
            let identity = ContentCoding.identityResponse(response, for: request, recorded: interaction.request)
        {
            response = identity
        }
        let status = response.status
        if interaction.chunks == nil, !response.headers.announcesEventStream, response.headers["Content-Length"] == nil,
            status >= 200, status != 204, status != 304
        {
            response.headers.add(name: "Content-Length", value: String(response.body.count))
        }
        response.body = []
        return Answer(response: response, source: .cassetteHead)
    }
}
