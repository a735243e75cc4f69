import Foundation
import KakapoCassette
import KakapoResources
import KakapoRouter
import KakapoUpstream
import Logging

/// Kakapo without a wire: the configuration checked once, the cassette loaded, the upstream client, the
/// cassette sessions and the `RequestPipeline` that answers. A transport (the NIO server in `KakapoProxy`,
/// or `InProcessKakapo` with no socket and no event loop) hands it requests and delivers its answers.
///
/// ```swift
/// let engine = try Engine(configuration: .init(mode: .replay, cassettePath: "cassettes/demo.json"))
/// try engine.start()
/// let answer = await engine.pipeline.answer(HTTP.Request(method: .get, target: "/users/1"))
/// let summary = await engine.shutdown()
/// ```
public final class Engine: Sendable {
    /// The configuration as resolved: `once` decided, an upstream made for the forward proxy.
    public let configuration: ProxyConfiguration
    /// What answers requests.
    public let pipeline: RequestPipeline
    private let logger: Logger

    /// Checks the configuration and loads the cassette; starts nothing yet. Throws `ProxyError` for an
    /// inconsistent configuration and `CassetteError` for a bad cassette.
    public init(configuration: ProxyConfiguration, logger: Logger = Logger(label: "kakapo")) throws {
        var configuration = configuration
        if let path = configuration.cassettePath {
            // A recording that was killed left its last interactions in the journal: they go in first.
            if let recovery = try CassetteSession.recover(path, matching: configuration.matching) {
                logger.notice("\(recovery.summary)")
            }
        }
        // With sessions and no cassette of its own, the server answers requests that name no session with a
        // miss; its mode is what sessions ask for by default.
        let sessionMode = configuration.mode
        let sessionsOnly = configuration.sessionDirectory != nil && configuration.cassettePath == nil
        if sessionsOnly && configuration.mode != .passthrough { configuration.mode = .replay }
        let exists = configuration.cassettePath.map { FileManager.default.fileExists(atPath: $0) } ?? false
        let hasUpstream = configuration.upstream != nil || configuration.forwardProxy != nil
        if let problem = configuration.mode.problem(
            cassette: configuration.cassettePath, cassetteExists: exists, hasUpstream: hasUpstream)
        {
            throw ProxyError(code: .configuration, message: problem)
        }
        if configuration.mode == .once, let path = configuration.cassettePath {
            configuration.mode = ProxyMode.once.resolved(cassetteExists: exists)
            logger.info(
                exists
                    ? "mode once: \(path) exists, replaying only (misses stay misses, the file is not changed)"
                    : "mode once: \(path) does not exist yet, recording everything")
        }
        let mode = configuration.mode
        let needsUpstream = mode.usesUpstream || (sessionsOnly && sessionMode.usesUpstream)
        if configuration.forwardProxy != nil && needsUpstream {
            // Requests name their hosts; `--upstream`, when given, still takes those that name none.
            var upstream = configuration.upstream ?? UpstreamConfiguration(baseURL: "")
            upstream.ignoresProxyEnvironment = true
            configuration.upstream = upstream
        }
        if needsUpstream && configuration.upstream == nil {
            throw ProxyError(
                code: .configuration,
                message: sessionMode.problem(
                    cassette: configuration.sessionDirectory, cassetteExists: true, hasUpstream: false)
                    ?? "mode '\(sessionMode.rawValue)' needs an upstream (--upstream URL)")
        }
        var session: CassetteSession?
        if let path = configuration.cassettePath {
            session = try CassetteSession.opened(
                at: path, mode: mode, redactor: configuration.redactor, matching: configuration.matching,
                repeatPolicy: configuration.repeatPolicy, logger: logger)
        }
        var upstream: UpstreamClient?
        if mode.usesUpstream || configuration.sessionDirectory != nil,
            let upstreamConfiguration = configuration.upstream
        {
            do {
                upstream = try UpstreamClient(configuration: upstreamConfiguration)
            } catch {
                throw ProxyError(code: .configuration, message: error.message)
            }
        }
        guard configuration.maximumBufferedBodyBytes > 0 else {
            throw ProxyError(
                code: .configuration,
                message:
                    "the limit on buffered request bodies must be positive, not \(configuration.maximumBufferedBodyBytes)"
            )
        }
        var sessions: SessionRegistry?
        if let directory = configuration.sessionDirectory {
            let timeout = configuration.sessionTimeout
            guard timeout.isFinite, timeout >= 0.1, timeout <= 7 * 86_400 else {
                throw ProxyError(
                    code: .configuration,
                    message: "the session timeout must be between 0.1 and 604800 seconds, not \(timeout)")
            }
            sessions = try SessionRegistry(
                directory: directory, timeout: .milliseconds(Int(timeout * 1000)), defaultMode: sessionMode,
                defaultMatching: configuration.matching, redactor: configuration.redactor,
                repeatPolicy: configuration.repeatPolicy, hasUpstream: upstream != nil,
                proxyUser: configuration.forwardProxy?.credentials?.user,
                drainLimit: Self.drainLimit(configuration.shutdownGracePeriod), logger: logger)
        }
        self.configuration = configuration
        self.logger = logger
        self.pipeline = RequestPipeline(
            configuration: configuration, session: session, upstream: upstream, journal: RequestJournal(),
            sessions: sessions, logger: logger)
    }

    /// How long ending a session waits for its answers and streams: the grace period (seconds), within 0 to
    /// a day.
    private static func drainLimit(_ grace: Double) -> Duration {
        guard grace.isFinite else { return .seconds(10) }
        return .milliseconds(Int(max(0, min(grace, 86_400)) * 1000))
    }

    /// Builds an engine from the essentials: a cassette (nil for none: routes and the Store only), a mode,
    /// and an upstream for the modes that forward.
    public convenience init(cassette: String? = nil, mode: ProxyMode = .replay, upstream: String? = nil) throws {
        try self.init(configuration: .essentials(cassette: cassette, mode: mode, upstream: upstream))
    }

    /// The router for any host and path: `engine.router.get("/users/:id") { request in ... }`.
    public var router: Router { pipeline.routes.router }

    /// A router for requests under `baseURL` only (`http://api.test.com/v1` or `/v1`); the most specific
    /// router that has a route for a request answers it.
    public func register(_ baseURL: String) throws(RouterError) -> Router { try pipeline.routes.register(baseURL) }

    /// REST resources backed by a Store: `engine.resources.add(User.self, at: "/users", in: store)`.
    public var resources: StoreResources { pipeline.resources }

    /// Gets ready to answer: checks the routes and, when recording, starts saving the cassette. Throws
    /// `RouterError` for an invalid or conflicting route and `ProxyError` when the cassette cannot be saved.
    public func start() throws {
        try pipeline.routes.validate()
        try pipeline.resources.registry.validate()
        do {
            if configuration.mode.records { try pipeline.session?.startAutosave() }
        } catch {
            throw ProxyError(code: .configuration, message: "\(error)")
        }
    }

    /// Checks the routes only (a transport that binds first and starts saving after).
    package func validateRoutes() throws {
        try pipeline.routes.validate()
        try pipeline.resources.registry.validate()
    }

    /// Stops the upstream client, ends the sessions and saves the cassette when recording (on a thread of
    /// its own: this joins libcurl's threads and writes files), and returns what the run did. Requests in
    /// flight are the transport's to wait for first.
    @discardableResult
    public func shutdown() async -> ProxySummary {
        let pipeline = self.pipeline
        let saveError: String? = await Self.offThePool { () -> String? in
            // The inspector's event streams end first: their readers never hold shutdown up.
            pipeline.inspectorEvents.finishAll()
            pipeline.upstream?.shutdown()
            var errors = pipeline.sessions?.closeAll() ?? []
            if pipeline.savesCassette, let session = pipeline.session {
                // WebSocket conversations still open are recorded as they stand before the cassette closes.
                WebSocketRecordings.finishAll(recordingInto: session)
                do {
                    try session.close()
                } catch {
                    errors.insert("\(error)", at: 0)
                }
            }
            return errors.isEmpty ? nil : errors.joined(separator: "\n")
        }
        return summary(saveError: saveError)
    }

    /// What the run did so far: counts by source, what was recorded and redacted, misses, unused and
    /// stale recordings.
    public func summary(saveError: String? = nil) -> ProxySummary {
        let session = pipeline.session
        let snapshot = session?.snapshot
        let unused = (session?.unusedPositions ?? []).compactMap { position -> String? in
            guard let interaction = snapshot?.interactions[position] else { return nil }
            return "#\(position) \(interaction.request.method) \(interaction.request.url)"
                + RequestLabel.suffix(interaction.request)
        }
        var summary = ProxySummary(
            cassettePath: configuration.cassettePath, mode: configuration.mode, counts: pipeline.journal.counts,
            recorded: session?.recordedCount ?? 0, redacted: session?.redactionCounts ?? [:],
            misses: pipeline.journal.misses, unused: unused, saveError: saveError)
        summary.maximumAge = configuration.maximumAge.map(ProxySummary.describeAge)
        summary.unrecorded = UnrecordedAnswers.adding(
            session?.refusedCount ?? 0, .refused, to: pipeline.unrecorded.byReason)
        summary.stale = pipeline.staleReplays.withLock { $0 }.sorted().compactMap { position in
            guard let interaction = snapshot?.interactions[position] else { return nil }
            return
                "#\(position) \(interaction.request.method) \(interaction.request.url) (recorded \(interaction.recordedAt))"
        }
        return summary
    }

    /// Runs blocking work (joining libcurl threads, writing the file) on a thread of its own.
    private static func offThePool<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            let thread = Thread { continuation.resume(returning: work()) }
            thread.start()
        }
    }
}
