import Foundation
import KakapoCassette
import KakapoEngine
import KakapoRouter
import KakapoUpstream
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization

/// The Kakapo proxy: an HTTP/1.1 server on SwiftNIO that answers through the `RequestPipeline`, and HTTP/2
/// beside it when given an `HTTP2Serving` (`KakapoHTTP2.HTTP2Server`).
///
/// ```swift
/// let server = try ProxyServer(configuration: .init(port: 0, mode: .replay, cassettePath: "cassettes/demo.json"))
/// let port = try await server.start()
/// // ... clients talk to http://127.0.0.1:\(port) ...
/// let summary = await server.shutdown()
/// ```
public final class ProxyServer: EngineHost, Sendable {
    /// What answers: the configuration as resolved, the pipeline, the journal.
    public let engine: Engine
    public let tls: ServerTLS
    /// HTTP/2 beside HTTP/1.1 (h2c with prior knowledge, h2 by ALPN), or nil for HTTP/1.1 only.
    public let http2: (any HTTP2Serving)?
    private let logger: Logger
    private let group: MultiThreadedEventLoopGroup
    private let tracker = InFlightTracker()
    /// Says requests in flight with no bytes either way for `slowWarning` seconds; nil when that is 0.
    private let slowRequests: SlowRequestWatch?
    private let channel = Mutex<(any Channel)?>(nil)
    /// The admin listener (`ProxyConfiguration.adminPort`), once started; nil when there is none.
    private let adminChannel = Mutex<(any Channel)?>(nil)
    private let bodyBudget: BodyBudget
    /// Recorded answers prepared for the wire, by position in the cassette.
    private let replies = PreparedReplies()
    /// Whether shutting the server down shuts its engine down too (not when the engine is shared).
    private let ownsEngine: Bool

    /// Validates the configuration and loads the cassette (`Engine`); binds nothing yet.
    /// Throws `ProxyError` for an inconsistent configuration and `CassetteError` for a bad cassette.
    public convenience init(
        configuration: ProxyConfiguration, tls: ServerTLS = ServerTLS(), http2: (any HTTP2Serving)? = nil,
        logger: Logger = Logger(label: "kakapo")
    )
        throws
    {
        self.init(
            engine: try Engine(configuration: configuration, logger: logger), tls: tls, http2: http2, owning: true,
            logger: logger)
    }

    /// A server for an engine that already answers elsewhere (Kakapo in process given a socket too):
    /// shutting the server down leaves the engine running; its owner shuts it down.
    public convenience init(
        sharing engine: Engine, tls: ServerTLS = ServerTLS(), http2: (any HTTP2Serving)? = nil,
        logger: Logger = Logger(label: "kakapo")
    ) {
        self.init(engine: engine, tls: tls, http2: http2, owning: false, logger: logger)
    }

    private init(engine: Engine, tls: ServerTLS, http2: (any HTTP2Serving)?, owning: Bool, logger: Logger) {
        self.engine = engine
        self.tls = tls
        self.http2 = http2
        self.ownsEngine = owning
        self.bodyBudget = BodyBudget(limit: engine.configuration.maximumBufferedBodyBytes)
        self.logger = logger
        self.group = MultiThreadedEventLoopGroup(numberOfThreads: engine.configuration.threads ?? System.coreCount)
        self.slowRequests = SlowRequestWatch.make(seconds: engine.configuration.slowWarning, group: group)
    }

    /// Builds a server from the essentials: a cassette (nil for none: routes and the Store only), a mode,
    /// and an upstream for the modes that forward.
    public convenience init(cassette: String? = nil, mode: ProxyMode = .replay, upstream: String? = nil) throws {
        try self.init(configuration: .essentials(cassette: cassette, mode: mode, upstream: upstream))
    }

    /// Starts on `port` (the configured one when nil), serves until the surrounding task is cancelled,
    /// then shuts down gracefully and returns the summary.
    @discardableResult
    public func run(port: Int? = nil) async throws -> ProxySummary {
        try await start(port: port)
        await Self.untilCancelled()
        return await shutdown()
    }

    /// Returns once the calling task is cancelled (at once when it already is), holding no thread meanwhile.
    private static func untilCancelled() async {
        let waiter = Mutex<CheckedContinuation<Void, Never>?>(nil)
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                // Cancelled before the continuation was stored: the handler found nothing to resume.
                let resumeNow = waiter.withLock { waiter in
                    if Task.isCancelled { return true }
                    waiter = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            waiter.withLock { waiter in
                defer { waiter = nil }
                return waiter
            }?.resume()
        }
    }

    /// Checks the routes, binds and starts serving; returns the port (useful with port 0).
    /// Throws `RouterError` for an invalid or conflicting route and `ProxyError` when it cannot bind.
    @discardableResult
    public func start(port: Int? = nil) async throws -> Int {
        try engine.validateRoutes()
        let idle = TimeAmount.milliseconds(Int64(configuration.idleTimeout * 1000))
        var limits = NIOHTTPDecoderLimitConfiguration()
        limits.maxHeaderFieldSize = configuration.maximumHeaderBytes
        limits.maxHeaderListSize = configuration.maximumHeaderBytes
        let requestDeadline = TimeAmount.milliseconds(Int64(configuration.requestReadTimeout * 1000))
        let settings = HTTPConnectionSettings(
            pipeline: pipeline, tracker: tracker, maximumBodyBytes: configuration.maximumRequestBodyBytes,
            limits: limits, forward: configuration.forwardProxy, tls: tls, replies: replies, bodyBudget: bodyBudget,
            http2: http2, idleTimeout: idle, requestDeadline: requestDeadline,
            gracePeriod: .milliseconds(Int64(configuration.shutdownGracePeriod * 1000)), watch: slowRequests)
        let bound = try await bind(settings, tls: tls.listener, port: port ?? configuration.port)
        var admin: (any Channel)?
        if let adminPort = configuration.adminPort {
            // No forward proxying, no HTTP/2 and no TLS there: it answers Kakapo's own endpoints only.
            var adminSettings = HTTPConnectionSettings(
                pipeline: pipeline, tracker: tracker, maximumBodyBytes: configuration.maximumRequestBodyBytes,
                limits: limits, forward: nil, tls: ServerTLS(), replies: replies, bodyBudget: bodyBudget,
                idleTimeout: idle, requestDeadline: requestDeadline,
                gracePeriod: .milliseconds(Int64(configuration.shutdownGracePeriod * 1000)), watch: slowRequests)
            adminSettings.adminListener = true
            do {
                admin = try await bind(
                    adminSettings, tls: nil, port: adminPort, role: "the admin listener", flag: "--admin-port")
            } catch {
                try? await bound.close()
                throw error
            }
        }
        channel.withLock { $0 = bound }
        adminChannel.withLock { $0 = admin }
        slowRequests?.start()
        pipeline.sessions?.port.withLock { $0 = bound.localAddress?.port }
        pipeline.listeners.withLock { $0 = (bound.localAddress?.port, admin?.localAddress?.port) }
        do {
            // A shared engine was started by its owner.
            if ownsEngine { try engine.start() }
        } catch {
            try? await bound.close()
            try? await admin?.close()
            throw error
        }
        return bound.localAddress?.port ?? configuration.port
    }

    /// Binds a listener on the configured host and `port` whose connections are served with `settings`
    /// (behind `tls` when given). Throws `ProxyError` naming `role` and its `flag` when it cannot.
    private func bind(
        _ settings: HTTPConnectionSettings, tls listenerTLS: (any TLSTermination)?, port: Int,
        role: String = "the proxy", flag: String = "--port"
    ) async throws -> any Channel {
        let idle = settings.idleTimeout
        let requestDeadline = settings.requestDeadline
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
        do {
            let socket = try ListeningSocket.bound(host: configuration.host, port: port)
            return try await bootstrap.withBoundSocket(socket).get()
        } catch let error as IOError where error.errnoCode == EADDRINUSE {
            throw ProxyError(
                code: .portInUse,
                message:
                    "port \(port) on \(configuration.host) (\(role)) is in use by another program: stop it, or pick another port (\(flag) 0 picks a free one)"
            )
        } catch {
            throw ProxyError(code: .bind, message: "cannot listen on \(configuration.host):\(port) (\(role)): \(error)")
        }
    }

    /// The admin listener's bound port, once started; nil when there is none.
    public var adminPort: Int? { adminChannel.withLock { $0?.localAddress?.port } }

    /// The bound port, once started.
    public var port: Int? { channel.withLock { $0?.localAddress?.port } }

    /// Stops accepting, lets requests in flight finish (up to the grace period), saves the cassette,
    /// and stops every thread. Returns what the run did.
    @discardableResult
    public func shutdown() async -> ProxySummary {
        let server = channel.withLock { channel in
            defer { channel = nil }
            return channel
        }
        try? await server?.close()
        let admin = adminChannel.withLock { channel in
            defer { channel = nil }
            return channel
        }
        try? await admin?.close()
        // The inspector's event streams never end by themselves: they end now, so they hold up no one.
        engine.pipeline.inspectorEvents.finishAll()
        await tracker.drained(within: .milliseconds(Int(configuration.shutdownGracePeriod * 1000)))
        slowRequests?.stop()
        let summary = ownsEngine ? await engine.shutdown() : engine.summary()
        try? await group.shutdownGracefully()
        return summary
    }
}
