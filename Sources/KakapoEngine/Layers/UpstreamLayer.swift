import KakapoCassette
import KakapoHTTP
import KakapoJSON
import KakapoStreams
import KakapoUpstream
import KakapoWebSocket
import Synchronization

/// The upstream, through libcurl, in the modes that forward: the answer goes back as it arrives (a
/// stream as a `LiveResponse`), and in the modes that record it is recorded into the cassette.
enum UpstreamLayer: PipelineLayer {
    static func step(_ exchange: inout Exchange, in pipeline: RequestPipeline) -> LayerStep {
        guard exchange.mode.usesUpstream, pipeline.upstream != nil else { return .pass }
        return forward(
            exchange.request, replacing: exchange.mode == .all,
            recording: exchange.mode.records ? exchange.cassette : nil,
            for: exchange.mode.records ? exchange.testSession : nil, in: pipeline)
    }

    /// Forwards `request`, recording its answer into `session` when given (replacing earlier recordings of
    /// it when `replacing`); `bodyStream` is its body when that goes upstream as it arrives. A streamed
    /// answer recorded for `testSession` holds it open until its recording is handed over (or, should the
    /// session end first, is recorded as it stands then, marked abandoned).
    static func forward(
        _ request: HTTP.Request, replacing: Bool, recording session: CassetteSession?,
        for testSession: TestSession? = nil, bodyStream: RequestBodyStream? = nil, in pipeline: RequestPipeline
    ) -> LayerStep {
        guard let upstream = pipeline.upstream else { return .pass }
        if request.isWebSocketUpgrade {
            // libcurl does not carry WebSockets: the transport tunnels the upgrade, recording what is said.
            guard let destination = pipeline.tunnelDestination(for: request) else { return .pass }
            let plan = session.map { session in
                var escaped = request
                escaped.target = request.target.escapingRawBytes()
                return WebSocketRecordingPlan(
                    session: session, replacing: replacing, request: upstream.prepare(escaped))
            }
            return .now(Answer(.webSocket(.tunnel(destination, recording: plan)), source: .upstream))
        }
        let logger = pipeline.logger
        let redactor = pipeline.configuration.redactor
        let recordsBrokenStreams = pipeline.configuration.recordsBrokenStreams
        let recordsAbandonedStreams = pipeline.configuration.recordsAbandonedStreams
        let unrecorded = pipeline.unrecorded
        return .later { completion in
            var escaped = request
            // Raw bytes a URL may not hold (UTF-8 a client sent unescaped) go to libcurl, and so to the
            // recording, escaped with upper-case hex (RFC 3986 2.1); escapes the client wrote stay as written.
            escaped.target = request.target.escapingRawBytes()
            if let warning = upstream.hostSignatureWarning(for: escaped) { logger.warning("\(warning)") }
            let prepared = upstream.prepare(escaped)
            let started = ContinuousClock.now
            let described: @Sendable () -> String = {
                let url = redactor.redactedURL(of: prepared)
                return "\(prepared.method) "
                    + (prepared.origin == nil ? (upstream.url?.description ?? "") + url : url)
            }
            // The recording of a stream cut short (abandoned by its client, or broken off): what came, with
            // its offsets, and the mark that says how it ended.
            let cutShort: @Sendable (HTTP.Response, [ResponseChunk], _ abandoned: Bool) -> Interaction = {
                head, chunks, abandoned in
                var response = head
                response.body = chunks.joinedBytes
                return Interaction(
                    request: prepared, response: response, recordedAt: UTCTimestamp.now(),
                    durationMilliseconds: (ContinuousClock.now - started) / .milliseconds(1), chunks: chunks,
                    brokenOff: !abandoned, abandoned: abandoned)
            }
            // An answer is recorded once, whichever comes first: its end, its break, or its client leaving.
            let settled = Mutex(false)
            let settles: @Sendable () -> Bool = {
                settled.withLock { done in
                    defer { done = true }
                    return !done
                }
            }
            // The test session's hold on a stream being recorded for it, let go once its recording is handed
            // over (or it is not recorded).
            let held = Mutex<(@Sendable () -> Void)?>(nil)
            let letGo: @Sendable () -> Void = {
                held.withLock { release in
                    defer { release = nil }
                    return release
                }?()
            }
            // A stream the client leaves before its end is recorded as what came, marked abandoned, when it
            // leaves (not when the upstream next sends or gives up, which a quiet stream may never do); so is
            // one still going when its test session ends.
            let abandoned: @Sendable (LiveResponse, HTTP.Response, _ sessionEnded: Bool) -> Void = {
                stream, head, sessionEnded in
                // Released once this is handed over; but when the session's end finds the stream already
                // settled by its own end, that path releases it once its recording is in.
                var releases = true
                defer { if releases { letGo() } }
                guard let session else { return }
                guard settles() else {
                    releases = !sessionEnded
                    return
                }
                let left =
                    sessionEnded
                    ? "the session ended before the streamed answer to \(described()) did"
                    : "the client left the streamed answer to \(described()) before its end"
                guard recordsAbandonedStreams else {
                    unrecorded.note(.abandoned)
                    logger.warning(
                        "\(left); not recorded (--record-abandoned-streams records it as abandoned, the default)")
                    return
                }
                guard stream.isKeptWhole, let chunks = stream.abandonedChunks() else {
                    unrecorded.note(stream.isKeptWhole ? .abandonedUnrecordable : .tooLarge)
                    let why =
                        stream.isKeptWhole
                        ? "an answer of announced length is recorded only whole"
                        : "larger than \(upstream.configuration.maximumResponseBytes) bytes"
                    logger.warning("\(left); not recorded (\(why))")
                    return
                }
                // Called on the connection's event loop: handed over without waiting for the recorder.
                session.recordWithoutWaiting(cutShort(head, chunks, true), replacing: replacing)
                logger.info(
                    "\(left); recorded as abandoned after \(chunks.count) chunk\(chunks.count == 1 ? "" : "s")")
            }
            // Answers that stream (server-sent events, bodies of unknown or large size) go to the client as
            // they arrive: the answer completes at their head, and the recording (timed chunks for a
            // stream, see StreamRecording; the body otherwise) is made when the stream ends. A LiveResponse
            // is made at the head of a streamed answer only; every other answer needs none. Its head is kept
            // for the recording of a stream that breaks off.
            let live = Mutex<(stream: LiveResponse, head: HTTP.Response)?>(nil)
            let onStream: @Sendable (UpstreamStreamEvent) -> StreamDisposition = { event in
                switch event {
                case .head(let head, let resumer):
                    let stream = LiveResponse(
                        recording: StreamRecording.of(head.headers, recording: session != nil), resumer: resumer,
                        keepsPiecesForBreak: recordsBrokenStreams || recordsAbandonedStreams)
                    let response = HTTP.Response(status: head.status, headers: head.headers)
                    live.withLock { $0 = (stream, response) }
                    // A HEAD's transfer is left at its head on purpose (AnswerWriter): that is no abandoned stream.
                    if session != nil && request.method != .head {
                        stream.whenAbandoned { abandoned(stream, response, false) }
                        if let testSession {
                            held.withLock {
                                $0 = testSession.holdStream { abandoned(stream, response, true) }
                            }
                            stream.whenFinished(letGo)
                        }
                    }
                    var answer = Answer(
                        .response(status: head.status, headers: head.headers, body: .live(stream)), source: .upstream)
                    // Recorded when it ends whole (the inspector shows it as such from its head on).
                    answer.recorded = session != nil
                    completion(answer)
                    return .proceed
                case .data(let bytes):
                    // Pauses the transfer while the client is behind.
                    return live.withLock { $0?.stream }?.append(bytes) ?? .proceed
                case .tooLargeToKeep:
                    live.withLock { $0?.stream }?.dropKeptBody()
                    return .proceed
                }
            }
            upstream.send(prepared, bodyStream: bodyStream, keepsStreamedBody: session != nil, onStream: onStream) {
                result in
                let (stream, head) = live.withLock { ($0?.stream, $0?.head) }
                // A stream being recorded, whole or broken off, ends for its client once the recording is
                // journaled, so a client that saw the end (or the break) can count on the recording.
                let cancelled = stream?.isCancelled == true
                let recordsBreak: Bool
                let endsAfterRecording: Bool
                switch result {
                case .success:
                    recordsBreak = false
                    endsAfterRecording = session != nil && stream?.isKeptWhole == true
                case .failure:
                    recordsBreak = recordsBrokenStreams && session != nil && stream != nil && !cancelled
                    endsAfterRecording = recordsBreak
                }
                if let stream, !endsAfterRecording {
                    switch result {
                    case .success(let response): stream.finish(trailers: response.trailers)
                    case .failure: stream.finish(broken: true)
                    }
                }
                switch result {
                case .success(let response):
                    var answer = Answer(response: response, source: .upstream)
                    guard let session else {
                        if stream == nil { completion(answer) }
                        return
                    }
                    guard settles() else {
                        // Recorded as abandoned when its client left; the end reaches nobody.
                        if let stream { stream.finish(trailers: response.trailers) } else { completion(answer) }
                        return
                    }
                    if stream?.isKeptWhole == false {
                        unrecorded.note(.tooLarge)
                        logger.warning(
                            "not recorded: the answer to \(described()) is larger than \(upstream.configuration.maximumResponseBytes) bytes"
                        )
                        if stream == nil { completion(answer) }
                        return
                    }
                    if let coding = ContentCoding(header: response.headers["Content-Encoding"]),
                        response.body.count > ContentCoding.maximumDecodedBytes >> 11,
                        coding.decodesPastLimit(response.body)
                    {
                        logger.warning(
                            "recorded as sent: the \(coding.rawValue) answer to \(described()) decodes to more than \(ContentCoding.maximumDecodedBytes >> 20) MiB, so the cassette keeps it encoded (base64)"
                        )
                    }
                    let interaction = Interaction(
                        request: prepared, response: response, recordedAt: UTCTimestamp.now(),
                        durationMilliseconds: (ContinuousClock.now - started) / .milliseconds(1),
                        chunks: stream?.chunks(of: response.body))
                    answer.recorded = true
                    let recordedAnswer = answer
                    // Handed to the cassette's recorder, off the transfer loop: the client gets its answer
                    // once the recording is in the journal, so nothing answered is lost to kill -9 and
                    // requests a client sends one after the other are recorded in that order.
                    session.record(interaction, replacing: replacing) {
                        if let stream { stream.finish(trailers: response.trailers) } else { completion(recordedAnswer) }
                    }
                case .failure(let error) where cancelled:
                    logger.debug("the client left before the end of a streamed answer: \(error.message)")
                case .failure(let error) where stream != nil:
                    let broke =
                        "the streamed answer from \(upstream.destination(of: prepared) ?? "the upstream") broke: \(error.message)"
                    guard let session, let stream, let head else {
                        logger.warning("\(broke)")
                        return
                    }
                    guard settles() else {
                        if recordsBreak { stream.finish(broken: true) }
                        return
                    }
                    guard recordsBreak, stream.isKeptWhole, let chunks = stream.brokenChunks() else {
                        if recordsBreak { stream.finish(broken: true) }
                        unrecorded.note(
                            !stream.isKeptWhole ? .tooLarge : recordsBrokenStreams ? .brokenUnrecordable : .brokenOff)
                        logger.warning(
                            "\(broke); not recorded (\(recordsBrokenStreams ? "only a stream of unknown length that sent something is recorded broken off" : "--record-broken-streams records it with the break"))"
                        )
                        return
                    }
                    logger.warning("\(broke); recorded with the break after \(chunks.count) chunks")
                    session.record(cutShort(head, chunks, false), replacing: replacing) {
                        stream.finish(broken: true)
                    }
                case .failure(let error):
                    completion(failure(error, upstream: upstream.destination(of: prepared) ?? "none"))
                }
            }
        }
    }

    /// The 502, 503 or 504 that says why the upstream failed; a 503 (Kakapo out of descriptors, which
    /// passes once connections close) says when to try again.
    static func failure(_ error: UpstreamError, upstream: String) -> Answer {
        let body: JSONValue = [
            "error": .string(error.message),
            "code": .string(error.code.name),
            "upstream": .string(upstream),
        ]
        var response = HTTP.Response.json(body, status: error.status)
        if error.status == 503 { response.headers.add(name: "Retry-After", value: "1") }
        var answer = Answer(response: response, source: .error)
        answer.upstreamError = error
        return answer
    }
}
