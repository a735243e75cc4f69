import Foundation
import KakapoCassette
import KakapoRouter
import KakapoUpstream
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix

/// The Kakapo proxy: an HTTP/1.1 server on SwiftNIO that answers through the `RequestPipeline`.
///
/// ```swift
/// let server = try ProxyServer(configuration: .init(port: 0, mode: .none, cassettePath: "cassettes/demo.json"))
/// let port = try await server.start()
/// // ... clients talk to http://127.0.0.1:\(port) ...
/// let summary = await server.shutdown()
/// ```
public final class ProxyServer: Sendable {
    public let configuration: ProxyConfiguration
    public let pipeline: RequestPipeline
    private let logger: Logger
    private let group: MultiThreadedEventLoopGroup
    private let tracker = InFlightTracker()
    private let channel = NIOLockedValueBox<(any Channel)?>(nil)
    private let bodyBudget: BodyBudget

    /// Validates the configuration and loads the cassette; binds nothing yet.
    /// Throws `ProxyError` for an inconsistent configuration and `CassetteError` for a bad cassette.
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
        if sessionsOnly && configuration.mode != .passthrough { configuration.mode = .none }
        if configuration.mode == .once {
            guard let path = configuration.cassettePath else {
                throw ProxyError(code: .configuration, message: "mode 'once' needs a cassette (--cassette FILE)")
            }
            let exists = FileManager.default.fileExists(atPath: path)
            configuration.mode = ProxyMode.once.resolved(cassetteExists: exists)
            if !exists && configuration.upstream == nil && configuration.forwardProxy == nil {
                throw ProxyError(
                    code: .configuration,
                    message:
                        "mode 'once' records because \(path) does not exist yet, so it needs an upstream (--upstream URL)"
                )
            }
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
                code: .configuration, message: "mode '\(mode.rawValue)' needs an upstream (--upstream URL)")
        }
        if mode.records && configuration.cassettePath == nil {
            throw ProxyError(
                code: .configuration,
                message: "mode '\(mode.rawValue)' records, so it needs a cassette (--cassette FILE)")
        }
        var session: CassetteSession?
        if let path = configuration.cassettePath {
            let cassette = mode == .none ? try CassetteFile.load(path) : try CassetteFile.loadIfPresent(path)
            if mode.records { try CassetteFile.checkWritable(path) }
            let saveLogger = logger
            session = CassetteSession(
                path: path, cassette: cassette, redactor: configuration.redactor, matching: configuration.matching,
                repeatPolicy: configuration.repeatPolicy,
                onSaveError: { error in saveLogger.error("cannot save the cassette: \(error)") })
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
                repeatPolicy: configuration.repeatPolicy, hasUpstream: upstream != nil, logger: logger)
        }
        self.bodyBudget = BodyBudget(limit: configuration.maximumBufferedBodyBytes)
        self.configuration = configuration
        self.logger = logger
        self.pipeline = RequestPipeline(
            configuration: configuration, session: session, upstream: upstream, journal: RequestJournal(),
            sessions: sessions, logger: logger)
        self.group = MultiThreadedEventLoopGroup(numberOfThreads: configuration.threads ?? System.coreCount)
    }

    /// Builds a server from the essentials: a cassette (nil for none: routes and the Store only), a mode,
    /// and an upstream for the modes that forward.
    public convenience init(cassette: String? = nil, mode: ProxyMode = .none, upstream: String? = nil) throws {
        try self.init(
            configuration: ProxyConfiguration(
                mode: mode, cassettePath: cassette, upstream: upstream.map { UpstreamConfiguration(baseURL: $0) }))
    }

    /// The router for any host and path: `server.router.get("/users/:id") { request in ... }`.
    public var router: Router { pipeline.routes.router }

    /// A router for requests under `baseURL` only (`http://api.test.com/v1` or `/v1`); the most specific
    /// router that has a route for a request answers it.
    public func register(_ baseURL: String) throws(RouterError) -> Router { try pipeline.routes.register(baseURL) }

    /// REST resources backed by a Store: `server.resources.add(User.self, at: "/users", in: store)`.
    public var resources: StoreResources { pipeline.resources }

    /// Starts on `port` (the configured one when nil), serves until the surrounding task is cancelled,
    /// then shuts down gracefully and returns the summary.
    @discardableResult
    public func run(port: Int? = nil) async throws -> ProxySummary {
        try await start(port: port)
        while !Task.isCancelled {
            try? await Task.sleep(for: .seconds(3600))
        }
        return await shutdown()
    }

    /// Checks the routes, binds and starts serving; returns the port (useful with port 0).
    /// Throws `RouterError` for an invalid or conflicting route and `ProxyError` when it cannot bind.
    @discardableResult
    public func start(port: Int? = nil) async throws -> Int {
        try pipeline.routes.validate()
        try pipeline.resources.registry.validate()
        let idle = TimeAmount.milliseconds(Int64(configuration.idleTimeout * 1000))
        var limits = NIOHTTPDecoderLimitConfiguration()
        limits.maxHeaderFieldSize = configuration.maximumHeaderBytes
        limits.maxHeaderListSize = configuration.maximumHeaderBytes
        let settings = HTTPConnectionSettings(
            pipeline: pipeline, tracker: tracker, maximumBodyBytes: configuration.maximumRequestBodyBytes,
            limits: limits, forward: configuration.forwardProxy, bodyBudget: bodyBudget)
        let listenerTLS = configuration.listenerTLS
        let requestDeadline = TimeAmount.milliseconds(Int64(configuration.requestReadTimeout * 1000))
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .serverChannelInitializer { [logger] channel in
                // Out of descriptors, accept fails at once: wait a moment instead of retrying in a loop.
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(AcceptPauseHandler(logger: logger))
                }
            }
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelOption(.maxMessagesPerRead, value: 16)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let operations = channel.pipeline.syncOperations
                    let timeouts = ConnectionTimeoutHandler(idleTimeout: idle, requestDeadline: requestDeadline)
                    try operations.addHandler(timeouts)
                    if let listenerTLS {
                        try operations.addHandler(listenerTLS.makeServerHandler(forHost: "localhost"))
                    }
                    try settings.addHTTPHandlers(to: operations, timeouts: timeouts, origin: nil)
                }
            }
        let bound: any Channel
        do {
            let socket = try ListeningSocket.bound(host: configuration.host, port: port ?? configuration.port)
            bound = try await bootstrap.withBoundSocket(socket).get()
        } catch {
            throw ProxyError(
                code: .bind, message: "cannot listen on \(configuration.host):\(port ?? configuration.port): \(error)")
        }
        channel.withLockedValue { $0 = bound }
        pipeline.sessions?.port.withLock { $0 = bound.localAddress?.port }
        do {
            if pipeline.configuration.mode.records { try pipeline.session?.startAutosave() }
        } catch {
            try? await bound.close()
            throw ProxyError(code: .configuration, message: "\(error)")
        }
        return bound.localAddress?.port ?? configuration.port
    }

    /// Gets the pipeline ready to answer without a socket (Kakapo in process): checks the routes and, when
    /// recording, starts saving the cassette. `shutdown()` ends it as it ends a started server.
    public func startInProcess() throws {
        try pipeline.routes.validate()
        try pipeline.resources.registry.validate()
        if pipeline.configuration.mode.records { try pipeline.session?.startAutosave() }
    }

    /// The bound port, once started.
    public var port: Int? { channel.withLockedValue { $0?.localAddress?.port } }

    /// Stops accepting, lets requests in flight finish (up to the grace period), saves the cassette,
    /// and stops every thread. Returns what the run did.
    @discardableResult
    public func shutdown() async -> ProxySummary {
        let server = channel.withLockedValue { channel in
            defer { channel = nil }
            return channel
        }
        try? await server?.close()
        let deadline = ContinuousClock.now + .milliseconds(Int(configuration.shutdownGracePeriod * 1000))
        while tracker.current > 0 && ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(5))
        }
        let pipeline = self.pipeline
        let saveError: String? = await Self.offThePool { () -> String? in
            pipeline.upstream?.shutdown()
            var errors = pipeline.sessions?.closeAll() ?? []
            if pipeline.configuration.mode.records, let session = pipeline.session {
                do {
                    try session.close()
                } catch {
                    errors.insert("\(error)", at: 0)
                }
            }
            return errors.isEmpty ? nil : errors.joined(separator: "\n")
        }
        try? await group.shutdownGracefully()
        return summary(saveError: saveError)
    }

    private func summary(saveError: String?) -> ProxySummary {
        let session = pipeline.session
        let snapshot = session?.snapshot
        let unused = (session?.unusedPositions ?? []).compactMap { position -> String? in
            guard let interaction = snapshot?.interactions[position] else { return nil }
            return "#\(position) \(interaction.request.method) \(interaction.request.url)"
        }
        var summary = ProxySummary(
            cassettePath: configuration.cassettePath, mode: configuration.mode, counts: pipeline.journal.counts,
            recorded: session?.recordedCount ?? 0, redacted: session?.redactionCounts ?? [:],
            misses: pipeline.journal.misses, unused: unused, saveError: saveError)
        summary.maximumAge = configuration.maximumAge.map(ProxySummary.describeAge)
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
