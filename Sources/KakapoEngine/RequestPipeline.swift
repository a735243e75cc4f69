import Foundation
import KakapoCassette
import KakapoGRPC
import KakapoHTTP
import KakapoJSON
import KakapoRecordFilter
import KakapoResources
import KakapoRouter
import KakapoStreams
import KakapoStubs
import KakapoUpstream
import KakapoWebSocket
import Logging
import Synchronization

/// The chain of design section 2: admin, routes, store resources, the record filter, the cassette, the
/// upstream, and finally a miss. Each request stops at the first layer that answers. Callable from any
/// thread; the upstream answers on a libcurl worker thread, never on the caller's.
public final class RequestPipeline: Sendable {
    /// The configuration as the engine resolved it (`once` decided).
    public let configuration: ProxyConfiguration
    /// The server's own cassette, loaded and, in the modes that record, recorded into; nil without one.
    public let session: CassetteSession?
    package let upstream: UpstreamClient?
    /// What was answered, request by request: counts by source, misses, the recent entries.
    public let journal: RequestJournal
    /// The open cassette sessions, when sessions are enabled (`ProxyConfiguration.sessionDirectory`).
    package let sessions: SessionRegistry?
    package let logger: Logger
    /// Route handlers, the first layer after admin.
    public let routes = RouterRegistry()
    /// Declarative routes from routes files and the admin API, right after the Swift routes.
    public let stubs = StubRegistry()
    /// REST resources backed by the Store, after routes.
    public let resources: StoreResources
    /// Positions of loaded recordings older than `configuration.maximumAge`, worked out once at start.
    let stalePositions: Set<Int>
    /// Answers left out of the recording, by reason, for the summary.
    package let unrecorded = UnrecordedAnswers()
    /// Stale recordings replayed so far (positions), for the summary.
    let staleReplays = Mutex<Set<Int>>([])
    /// The server cassette's recordings with their times moved to now, once a second each (`ReplayTime`).
    let movedReplies = ReplayCache<(headers: HTTP.Headers, body: [UInt8]?)?>()
    /// The ports Kakapo listens on once started: the proxy's, and the admin listener's (nil when none).
    package let listeners = Mutex<(proxy: Int?, admin: Int?)>((nil, nil))
    /// The folder that file names in routes added through the admin API are relative to.
    let runtimeDirectory = Mutex(FileManager.default.currentDirectoryPath)
    /// The routes-file resources in force with their seeds, to make a session's own Store from.
    private let fileResources = Mutex<[(ResourceDefinition, seed: [JSONObject])]>([])
    /// The inspector's records of recent requests (`/__kakapo/requests/{id}`, the event stream's source).
    package let inspector = InspectorLog()
    /// `GET /__kakapo/events`.
    package let inspectorEvents: InspectorEvents
    /// Whether "save to cassette" started saving the server's cassette in a mode that does not record
    /// (shutdown then closes it as it closes a recording).
    let savesForInspector = Mutex(false)
    /// Where miss reports are made, one at a time, away from the event loops.
    let missQueue = DispatchQueue(label: "kakapo.miss-report")
    /// The miss lines of the log, rate-limited.
    let missLog = MissLog()

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
        self.inspectorEvents = InspectorEvents(log: inspector)
    }

    /// The layers every request walks, in order; it stops at the first that answers (design section 2).
    static let layers: [any PipelineLayer.Type] = [
        AdminLayer.self, SessionLayer.self, RouteLayer.self, StubLayer.self, ResourceLayer.self,
        RecordFilterLayer.self, CassetteLayer.self, UpstreamLayer.self, MissLayer.self,
    ]

    /// Answers `request`. `completion` runs exactly once, on this thread for answers that need no I/O,
    /// or on another (an upstream worker thread, a task, a queue).
    package func handle(
        _ request: HTTP.Request, fromLoopback: Bool, completion: @escaping @Sendable (Answer) -> Void
    ) {
        // A gRPC call gets Kakapo's own errors as gRPC statuses.
        let completion = GRPCAnswers.converting(completion, for: request)
        var exchange = Exchange(
            request: request, fromLoopback: fromLoopback, mode: configuration.mode, cassette: session)
        for layer in Self.layers {
            let step = layer.step(&exchange, in: self)
            if case .pass = step { continue }
            var reply = completion
            if let testSession = exchange.testSession {
                // Begun by the session layer: in flight until answered.
                reply = { given in
                    testSession.end()
                    var answer = given
                    answer.session = testSession.id
                    completion(answer)
                }
            }
            _ = step.start(reply)
            return
        }
    }

    /// Answers `request` the way the server does for a client on loopback, for callers without a socket
    /// (Kakapo in process): waits out a route's latency and journals the request. The answer may be a
    /// fault instead of a response; the caller turns it into its own kind of failure. A streamed answer
    /// comes back whole (`.bytes`), once the upstream is done.
    public func answer(_ request: HTTP.Request) async -> Answer {
        let (answer, body) = await withCheckedContinuation { continuation in
            answerStreaming(request) { continuation.resume(returning: ($0, $1)) }
        }
        // A recorded stream's whole body is in the answer already.
        guard let body, body.isLive, case .response(let status, let headers, _) = answer.outcome else {
            body?.cancel()
            return answer
        }
        var whole = answer
        let bytes = await withCheckedContinuation { continuation in
            body.collect { bytes, _ in continuation.resume(returning: bytes) }
        }
        whole.outcome = .response(status: status, headers: headers, body: .bytes(bytes))
        return whole
    }

    /// Answers `request` like `answer(_:)`, calling `completion` once, on any thread (never Swift's
    /// cooperative pool): a body that streams is not waited for but comes as a `StreamedBody` (a live
    /// upstream stream as it arrives, or a recorded one with its gaps as `streamTiming` says). The body
    /// is nil for any other answer. The request is journaled when the answer's head is ready, as the
    /// server does.
    public func answerStreaming(
        _ request: HTTP.Request, completion: @escaping @Sendable (Answer, StreamedBody?) -> Void
    ) {
        let started = ContinuousClock.now
        handle(request, fromLoopback: true) { [self] given in
            var answer = given
            if case .webSocket = given.outcome {
                // In process there is no connection to hand over.
                answer = .error(
                    "WebSocket conversations are served by Kakapo's server (kakapo replay, or KakapoTesting's server), not in process",
                    status: 501)
            }
            var body: StreamedBody?
            switch answer.outcome {
            case .response(_, _, .live(let live)):
                body = StreamedBody(live: live)
            case .response(_, _, .recorded(let chunks)) where request.method != .head:
                body = StreamedBody(recorded: chunks, timing: configuration.streamTiming, breaksOff: answer.breaksOff)
            default:
                break
            }
            let streamed = body
            let answered = answer
            let finish: @Sendable () -> Void = { [self] in
                journal(request, answered, milliseconds: (ContinuousClock.now - started) / .milliseconds(1))
                completion(answered, streamed)
            }
            let delay = ReplayDelay.nanoseconds(answered.delay)
            if delay > 0 {
                DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(Int(delay)), execute: finish)
            } else {
                finish()
            }
        }
    }

    /// Whether `request` is for the admin API. The target starts with the path (or is absolute-form,
    /// which is never an admin request); requests addressed to another host (a forward proxy's) never are
    /// either.
    package static func isAdmin(_ request: HTTP.Request) -> Bool {
        request.origin == nil && request.target.hasPrefix(AdminEndpoints.prefix)
    }

    /// Whether a request's body may go upstream as it arrives instead of being read whole first: only
    /// where nothing else could answer it or needs its body (passthrough, no routes, no Store, not an
    /// admin request), so a large upload costs no memory.
    package func streamsBody(of request: HTTP.Request) -> Bool {
        configuration.mode == .passthrough && upstream != nil
            && !Self.isAdmin(request) && sessions == nil
            && !routes.hasRoutes && !stubs.hasRoutes && !resources.registry.hasRoutes && !resources.hasCollections
    }

    /// Sends a request whose body is still arriving straight upstream (see `streamsBody(of:)`).
    package func forward(
        _ request: HTTP.Request, streaming body: RequestBodyStream, completion: @escaping @Sendable (Answer) -> Void
    ) {
        // A request the record filter keeps out is not recorded, and its answer says so.
        let keptOut = RecordFilterLayer.keepsOut(request, mode: configuration.mode, in: self)
        var step = UpstreamLayer.forward(
            request, replacing: false, recording: configuration.mode.records && !keptOut ? session : nil,
            bodyStream: body, in: self)
        if keptOut { step = RecordFilterLayer.passedThrough(step) }
        if !step.start(completion) {
            let exchange = Exchange(request: request, fromLoopback: true, mode: configuration.mode, cassette: session)
            completion(MissLayer.miss(exchange, in: self))
        }
    }

    /// Where a WebSocket upgrade request is tunnelled: the upstream's host and port, whether it speaks
    /// TLS, the target there and the `Host` to send; nil when there is no upstream. The caller decides by
    /// the request's mode (a cassette session's may forward where the server's own does not).
    package func tunnelDestination(for request: HTTP.Request) -> WebSocketDestination? {
        guard let upstream else { return nil }
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
}
