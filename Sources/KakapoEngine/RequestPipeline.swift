import Foundation
import KakapoCassette
import KakapoHTTP
import KakapoJSON
import KakapoRouter
import KakapoStubs
import KakapoUpstream
import Logging
import Synchronization

/// The chain of design section 2: admin, routes, store resources, the cassette, the upstream, and
/// finally a miss. Each request stops at the first layer that answers. Callable from any thread; the
/// upstream answers on a libcurl worker thread, never on the caller's.
public final class RequestPipeline: Sendable {
    public let configuration: ProxyConfiguration
    public let session: CassetteSession?
    public let upstream: UpstreamClient?
    public let journal: RequestJournal
    /// The open cassette sessions, when sessions are enabled (`ProxyConfiguration.sessionDirectory`).
    let sessions: SessionRegistry?
    let logger: Logger
    /// Route handlers, the first layer after admin.
    public let routes = RouterRegistry()
    /// Declarative routes from routes files and the admin API, right after the Swift routes.
    public let stubs = StubRegistry()
    /// REST resources backed by the Store, after routes.
    public let resources: StoreResources
    /// Positions of loaded recordings older than `configuration.maximumAge`, worked out once at start.
    let stalePositions: Set<Int>
    /// Stale recordings replayed so far (positions), for the summary.
    let staleReplays = Mutex<Set<Int>>([])
    /// The folder that file names in routes added through the admin API are relative to.
    let runtimeDirectory = Mutex(FileManager.default.currentDirectoryPath)
    /// The routes-file resources in force with their seeds, to make a session's own Store from.
    private let fileResources = Mutex<[(ResourceDefinition, seed: [JSONObject])]>([])
    /// Recorded answers prepared for the wire, by position in the cassette.
    private let replies = PreparedReplies()
    /// Where miss reports are made, one at a time, away from the event loops.
    private let missQueue = DispatchQueue(label: "kakapo.miss-report")

    init(
        configuration: ProxyConfiguration, session: CassetteSession?, upstream: UpstreamClient?,
        journal: RequestJournal, sessions: SessionRegistry? = nil,
        logger: Logger
    ) {
        self.sessions = sessions
        self.logger = logger
        self.configuration = configuration
        self.resources = StoreResources(
            shared: configuration.sharedStore, sharedTimeout: configuration.sharedStoreTimeout)
        self.session = session
        var stale: Set<Int> = []
        if let maximumAge = configuration.maximumAge, let session {
            let oldest = Date().addingTimeInterval(-maximumAge)
            for (position, interaction) in session.snapshot.interactions.enumerated() {
                if let recorded = interaction.recordedDate, recorded < oldest { stale.insert(position) }
            }
        }
        self.stalePositions = stale
        self.upstream = upstream
        self.journal = journal
    }

    /// Answers `request`. `completion` runs exactly once, on this thread for answers that need no I/O,
    /// or on an upstream worker thread.
    public func handle(
        _ request: HTTP.Request, fromLoopback: Bool, completion: @escaping @Sendable (ProxyAnswer) -> Void
    ) {
        if Self.isAdmin(request) {
            if let (queue, later) = AdminEndpoints.sessionAnswer(request, fromLoopback: fromLoopback, pipeline: self) {
                queue.async { completion(later()) }
                return
            }
            if let later = AdminEndpoints.sharedStoreAnswer(request, fromLoopback: fromLoopback, pipeline: self) {
                Task { completion(await later()) }
                return
            }
            completion(AdminEndpoints.answer(request, fromLoopback: fromLoopback, pipeline: self))
            return
        }
        var request = request
        var testSession: TestSession?
        var completion = completion
        if let sessions {
            switch sessions.select(&request) {
            case .none: break
            case .session(let session):
                testSession = session
                // In flight until answered, so the session neither expires nor saves without it.
                session.begin()
                let answered = completion
                completion = { answer in
                    session.end()
                    answered(answer)
                }
            case .unknown(let id):
                completion(
                    ProxyAnswer(
                        response: .json(["error": .string(SessionRegistry.unknown(id))], status: 404), source: .error))
                return
            }
        }
        if routes.hasRoutes, let route = routes.match(request) {
            answer(request, with: route, source: .route, completion: completion)
            return
        }
        if stubs.hasRoutes, let answer = stubs.answer(request) {
            if let problem = answer.problem {
                // The client gets a 500 saying why; the person running Kakapo sees it here.
                logger.warning("route \(answer.route) could not answer \(request.method) \(request.path): \(problem)")
            }
            completion(ProxyAnswer(answer))
            return
        }
        if resources.registry.hasRoutes, let resource = resources.registry.match(request) {
            answer(request, with: resource, source: .store, completion: completion)
            return
        }
        switch (testSession?.store ?? resources).answerCollection(request) {
        case .now(let response)?:
            completion(ProxyAnswer(response: response, source: .store))
            return
        case .later(let respond)?:
            Task { completion(ProxyAnswer(response: await respond(), source: .store)) }
            return
        case nil:
            break
        }
        let mode = testSession?.mode ?? configuration.mode
        let session = testSession?.cassette ?? self.session
        if mode == .none || mode == .new, let session, let hit = session.play(request) {
            testSession?.noteReplay()
            if testSession == nil, !stalePositions.isEmpty, stalePositions.contains(hit.position) {
                // Too old: re-recorded where the mode records, replayed with a warning otherwise.
                if mode == .new, let upstream {
                    forward(request, through: upstream, replacing: true, recording: session, completion: completion)
                    return
                }
                staleReplays.withLock { _ = $0.insert(hit.position) }
            }
            if hit.interaction.request.method != request.method {
                // A HEAD answered from a GET recording (InteractionIndex.play).
                completion(Self.headAnswer(from: hit.interaction))
                return
            }
            let prepared = (testSession?.replies ?? replies).prepared(hit.position) {
                PreparedResponse(hit.interaction.response, source: .cassette, for: .GET)
            }
            var answer = ProxyAnswer(response: hit.interaction.response, source: .cassette, prepared: prepared)
            answer.chunks = hit.interaction.chunks
            completion(answer)
            return
        }
        guard mode.usesUpstream, let upstream else {
            answerMiss(request, in: testSession, completion: completion)
            return
        }
        forward(
            request, through: upstream, replacing: mode == .all, recording: mode.records ? session : nil,
            completion: completion)
    }

    /// Answers `request` the way the server does for a client on loopback, for callers without a socket
    /// (Kakapo in process): waits out a route's latency and journals the request. The answer may carry
    /// a `fault` instead of a response; the caller turns it into its own kind of failure.
    /// A streamed answer comes back whole, once the upstream is done.
    public func answer(_ request: HTTP.Request) async -> ProxyAnswer {
        let (answer, body) = await withCheckedContinuation { continuation in
            answerStreaming(request) { continuation.resume(returning: ($0, $1)) }
        }
        // A recorded stream's whole body is in the answer already.
        guard let body, body.isLive else {
            body?.cancel()
            return answer
        }
        var whole = answer
        whole.response.body = await withCheckedContinuation { continuation in
            body.collect { bytes, _ in continuation.resume(returning: bytes) }
        }
        return whole
    }

    /// Answers `request` like `answer(_:)`, calling `completion` once, on any thread (never Swift's
    /// cooperative pool): a body that streams is not waited for but comes as a `StreamedBody` (a live
    /// upstream stream as it arrives, with `answer.response.body` empty, or a recorded one with its gaps
    /// as `streamTiming` says, whose whole body is in the answer too). The body is nil for any other
    /// answer. The request is journaled when the answer's head is ready, as the server does.
    public func answerStreaming(
        _ request: HTTP.Request, completion: @escaping @Sendable (ProxyAnswer, StreamedBody?) -> Void
    ) {
        let started = ContinuousClock.now
        handle(request, fromLoopback: true) { [self] answer in
            var answer = answer
            var body: StreamedBody?
            if let live = answer.live {
                body = StreamedBody(live: live)
                answer.live = nil
            } else if let chunks = answer.chunks, request.method != .head {
                body = StreamedBody(recorded: chunks, timed: configuration.streamTiming == .recorded)
            }
            let ready = answer
            let streamed = body
            let finish: @Sendable () -> Void = { [self] in
                journal(request, ready, milliseconds: (ContinuousClock.now - started) / .milliseconds(1))
                completion(ready, streamed)
            }
            if answer.delay > .zero {
                // Nanoseconds that cannot overflow: a delay past a year waits a year.
                let (seconds, attoseconds) = min(answer.delay, .seconds(365 * 86_400)).components
                DispatchQueue.global().asyncAfter(
                    deadline: .now() + .nanoseconds(Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)),
                    execute: finish)
            } else {
                finish()
            }
        }
    }

    /// Puts an answered request in the journal and returns its URL as journaled (credentials redacted).
    @discardableResult
    func journal(_ request: HTTP.Request, _ answer: ProxyAnswer, milliseconds: Double) -> String {
        let url = configuration.redactor.redactedURL(of: request)
        journal.append(
            .init(
                method: request.method.rawValue, url: url, status: answer.response.status, source: answer.source,
                milliseconds: milliseconds), target: request.target)
        return url
    }

    /// The answer to a `HEAD` from a `GET` recording: its status and headers, with the `Content-Length` the
    /// `GET` replay states (the recorded one, else the body's), and no body; a recorded stream keeps no
    /// length, as its `GET` replay has none.
    static func headAnswer(from interaction: Interaction) -> ProxyAnswer {
        var response = interaction.response
        let status = response.status
        if interaction.chunks == nil, !response.headers.announcesEventStream, response.headers["Content-Length"] == nil,
            status >= 200, status != 204, status != 304
        {
            response.headers.add(name: "Content-Length", value: String(response.body.count))
        }
        response.body = []
        return ProxyAnswer(response: response, source: .cassetteHead)
    }

    /// Runs a handler in a task of its own, so the event loop never waits for it.
    private func answer(
        _ request: HTTP.Request, with match: RouteMatch, source: ResponseSource,
        completion: @escaping @Sendable (ProxyAnswer) -> Void
    ) {
        Task {
            let response = await match.respond(to: request)
            completion(ProxyAnswer(response: response, source: source))
        }
    }

    /// Whether `request` is for the admin API. The target starts with the path (or is absolute-form,
    /// which is never an admin request); requests addressed to another host (a forward proxy's) never are
    /// either.
    static func isAdmin(_ request: HTTP.Request) -> Bool {
        request.origin == nil && request.target.hasPrefix(AdminEndpoints.prefix)
    }

    /// Whether a request's body may go upstream as it arrives instead of being read whole first: only
    /// where nothing else could answer it or needs its body (passthrough, no routes, no Store, not an
    /// admin request), so a large upload costs no memory.
    func streamsBody(of request: HTTP.Request) -> Bool {
        configuration.mode == .passthrough && upstream != nil
            && !Self.isAdmin(request) && sessions == nil
            && !routes.hasRoutes && !stubs.hasRoutes && !resources.registry.hasRoutes && !resources.hasCollections
    }

    /// Sends a request whose body is still arriving straight upstream (see `streamsBody(of:)`).
    func forward(
        _ request: HTTP.Request, streaming body: RequestBodyStream,
        completion: @escaping @Sendable (ProxyAnswer) -> Void
    ) {
        guard let upstream else {
            completion(miss(request))
            return
        }
        forward(
            request, through: upstream, replacing: false, recording: configuration.mode.records ? session : nil,
            bodyStream: body, completion: completion)
    }

    private func forward(
        _ request: HTTP.Request, through upstream: UpstreamClient, replacing: Bool, recording session: CassetteSession?,
        bodyStream: RequestBodyStream? = nil, completion: @escaping @Sendable (ProxyAnswer) -> Void
    ) {
        var escaped = request
        // Raw bytes a URL may not hold (UTF-8 a client sent unescaped) go to libcurl, and so to the
        // recording, escaped with upper-case hex (RFC 3986 2.1); escapes the client wrote stay as written.
        escaped.target = request.target.escapingRawBytes()
        let prepared = upstream.prepare(escaped)
        let started = ContinuousClock.now
        // Answers that stream (server-sent events, bodies of unknown or large size) go to the client as
        // they arrive: the answer completes at their head, and the recording (timed chunks for a stream,
        // see StreamRecording; the body otherwise) is made when the stream ends. A LiveResponse is made at the
        // head of a streamed answer only; every other answer needs none.
        let live = Mutex<LiveResponse?>(nil)
        let onStream: @Sendable (UpstreamStreamEvent) -> StreamDisposition = { event in
            switch event {
            case .head(let head, let resumer):
                let stream = LiveResponse(
                    recording: StreamRecording.of(head.headers, recording: session != nil), resumer: resumer)
                live.withLock { $0 = stream }
                var answer = ProxyAnswer(response: head, source: .upstream)
                answer.live = stream
                completion(answer)
                return .proceed
            case .data(let bytes):
                // Pauses the transfer while the client is behind.
                return live.withLock { $0 }?.append(bytes) ?? .proceed
            case .tooLargeToKeep:
                live.withLock { $0 }?.dropKeptBody()
                return .proceed
            }
        }
        upstream.send(prepared, bodyStream: bodyStream, keepsStreamedBody: session != nil, onStream: onStream) {
            [logger, redactor = configuration.redactor] result in
            let stream = live.withLock { $0 }
            if let stream {
                var failed = false
                if case .failure = result { failed = true }
                stream.finish(broken: failed)
            }
            switch result {
            case .success(let response):
                let elapsed = ContinuousClock.now - started
                // Recorded before the client gets its answer, so requests a client sends one after the
                // other are recorded in that order.
                if let session {
                    if stream?.isKeptWhole == false {
                        logger.warning(
                            "not recorded: the answer to \(prepared.method) \(RequestPipeline.loggedURL(of: prepared, upstream: upstream, redactor: redactor)) is larger than \(upstream.configuration.maximumResponseBytes) bytes"
                        )
                    } else {
                        if let coding = ContentCoding(header: response.headers["Content-Encoding"]),
                            response.body.count > ContentCoding.maximumDecodedBytes >> 11,
                            coding.decodesPastLimit(response.body)
                        {
                            logger.warning(
                                "recorded as sent: the \(coding.rawValue) answer to \(prepared.method) \(RequestPipeline.loggedURL(of: prepared, upstream: upstream, redactor: redactor)) decodes to more than \(ContentCoding.maximumDecodedBytes >> 20) MiB, so the cassette keeps it encoded (base64)"
                            )
                        }
                        session.record(
                            Interaction(
                                request: prepared, response: response, recordedAt: UTCTimestamp.now(),
                                durationMilliseconds: elapsed / .milliseconds(1),
                                chunks: stream?.chunks(of: response.body)),
                            replacing: replacing)
                    }
                }
                if stream == nil { completion(ProxyAnswer(response: response, source: .upstream)) }
            case .failure(let error) where stream?.isCancelled == true:
                logger.debug("the client left before the end of a streamed answer: \(error.message)")
            case .failure(let error) where stream != nil:
                logger.warning(
                    "the streamed answer from \(upstream.destination(of: prepared) ?? "the upstream") broke: \(error.message)"
                )
            case .failure(let error):
                completion(
                    RequestPipeline.upstreamFailure(error, upstream: upstream.destination(of: prepared) ?? "none"))
            }
        }
    }

    /// A forwarded request's URL for a log line: where it went, with secret query values redacted.
    private static func loggedURL(of prepared: HTTP.Request, upstream: UpstreamClient, redactor: Redactor) -> String {
        let url = redactor.redactedURL(of: prepared)
        return prepared.origin == nil ? (upstream.url?.description ?? "") + url : url
    }

    /// Where a WebSocket upgrade request is tunnelled: the upstream's host and port, whether it speaks
    /// TLS, the target there and the `Host` to send; nil when this mode does not forward.
    func tunnelDestination(for request: HTTP.Request) -> WebSocketDestination? {
        guard configuration.mode.usesUpstream, let upstream else { return nil }
        let url: String
        if let origin = request.origin {
            url = origin + request.target
        } else if let base = upstream.url {
            url = base.url(for: request.target)
        } else {
            return nil
        }
        guard let (origin, target) = RequestOrigin.split(absoluteURL: url) else { return nil }
        let authority = RequestOrigin.authority(of: origin)
        let secure = origin.hasPrefix("https:")
        guard let (host, port) = RequestOrigin.splitAuthority(authority) else { return nil }
        return WebSocketDestination(
            host: host, port: port ?? (secure ? 443 : 80), secure: secure, target: target, authority: authority)
    }

    /// Serves what a routes file declares: its routes replace the file routes in force, and its resources
    /// replace the file resources (those whose definition did not change keep their entities). A resource
    /// seeded from a recording needs that recording in the loaded cassette. `directory` is where file
    /// names in routes added later through the admin API are looked up.
    public func install(_ definition: RoutesDefinition, directory: String? = nil) throws(RoutesError) {
        var resolved: [(ResourceDefinition, seed: [JSONObject])] = []
        for resource in definition.resources {
            switch resource.seed {
            case .none: resolved.append((resource, []))
            case .documents(let documents): resolved.append((resource, documents))
            case .cassette(let method, let target):
                resolved.append((resource, try recordedSeed(resource, method: method, target: target)))
            }
        }
        stubs.replaceFileRoutes(definition.routes)
        resources.replaceCollections(resolved)
        fileResources.withLock { $0 = resolved }
        if let directory { runtimeDirectory.withLock { $0 = directory } }
    }

    /// The routes-file resources seeded afresh, in memory, for a session with its own Store.
    func freshFileResources() -> StoreResources {
        let store = StoreResources()
        store.replaceCollections(fileResources.withLock { $0 })
        return store
    }

    private func recordedSeed(_ resource: ResourceDefinition, method: HTTP.Method, target: String) throws(RoutesError)
        -> [JSONObject]
    {
        func failure(_ message: String) -> RoutesError {
            var error = RoutesError(path: resource.seedPath, message: message)
            error.file = resource.seedLocation?.file
            error.line = resource.seedLocation?.line
            error.column = resource.seedLocation?.column
            return error
        }
        guard let session else { throw failure("the seed names a recording, but no cassette is loaded (--cassette)") }
        guard
            let interaction = session.snapshot.interactions.first(where: {
                $0.request.method == method && $0.request.target == target
            })
        else { throw failure("the cassette \(session.path) has no recording of \(method) \(target)") }
        let body = ContentCoding.decoding(interaction.response.body, headers: interaction.response.headers).content
        let value: JSONValue
        do {
            value = try JSONParser.parse(body)
        } catch {
            throw failure("the recorded answer to \(method) \(target) is not JSON: \(error)")
        }
        do {
            return try resource.documents(fromRecorded: value)
        } catch {
            throw failure("the recorded answer to \(method) \(target): \(error.message)")
        }
    }

    /// Answers a miss off the caller's thread when its report searches a cassette: the search is
    /// bounded (`MissReport.comparedLimit`), but on a large cassette still too long for an event loop, and
    /// misses answered one at a time on their own queue never hold back hits.
    private func answerMiss(
        _ request: HTTP.Request, in testSession: TestSession?, completion: @escaping @Sendable (ProxyAnswer) -> Void
    ) {
        guard session != nil || testSession != nil else {
            completion(miss(request))
            return
        }
        missQueue.async { [self] in completion(miss(request, in: testSession)) }
    }

    func miss(_ request: HTTP.Request, in testSession: TestSession? = nil) -> ProxyAnswer {
        var body: JSONValue
        if let testSession {
            body = testSession.cassette.missReport(for: request).json
            testSession.noteMiss(body)
            if case .object(var object) = body {
                object["session"] = .string(testSession.id)
                object["cassette"] = .string(testSession.name)
                body = .object(object)
            }
        } else if let session {
            body = session.missReport(for: request).json
        } else {
            body = .object([
                "error": "no cassette is loaded and no upstream is configured",
                "request": .object([
                    "method": .string(request.method.rawValue),
                    "url": .string(configuration.redactor.redactedURL(of: request)),
                ]),
            ])
        }
        if case .object(var object) = body {
            object["mode"] = .string((testSession?.mode ?? configuration.mode).rawValue)
            body = .object(object)
        }
        return ProxyAnswer(response: .json(body, status: configuration.missStatus), source: .miss)
    }

    static func upstreamFailure(_ error: UpstreamError, upstream: String) -> ProxyAnswer {
        let body: JSONValue = [
            "error": .string(error.message),
            "code": .string(error.code.name),
            "upstream": .string(upstream),
        ]
        var answer = ProxyAnswer(response: .json(body, status: error.status), source: .error)
        answer.upstreamError = error
        return answer
    }
}

extension HTTP.Response {
    /// A JSON response laid out for people (these are errors and reports, read in terminals and logs),
    /// with a trailing newline.
    static func json(_ value: JSONValue, status: Int) -> HTTP.Response {
        var bytes = JSONWriter(layout: .readable).write(value)
        bytes.append(UInt8(ascii: "\n"))
        return HTTP.Response(status: status, headers: ["Content-Type": "application/json"], body: bytes)
    }

    /// `{"error": message}` with the error's status.
    static func error(_ error: any HTTPResponseError) -> HTTP.Response {
        .json(["error": .string(error.message)], status: error.status)
    }
}
