import Foundation
import KakapoEngine
import KakapoRouter
import KakapoUpstream
import Logging
import Synchronization

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Kakapo in process: the same pipeline as the server (routes, Store resources, cassette, upstream through
/// libcurl, miss) answering `URLSession` requests with no socket, as the original Kakapo did.
///
/// ```swift
/// let kakapo = try InProcessKakapo(cassette: "cassettes/demo.json")
/// kakapo.router.get("/users/:id") { request in ["id": try request.parameters.require("id")] }
/// let session = URLSession(configuration: kakapo.sessionConfiguration())
/// let (data, _) = try await session.data(from: URL(string: "http://api.test/users/7")!)   // {"id":"7"}
/// let summary = await kakapo.shutdown()
/// ```
public final class InProcessKakapo: EngineHost, Sendable {
    /// What answers: the same engine as the server's, with no socket and no event loop.
    public let engine: Engine
    /// The protocol class this instance's sessions use.
    private let protocolClass: AnyClass

    /// Builds the pipeline from `configuration` (port and host are ignored) and gets it ready.
    public init(configuration: ProxyConfiguration, logger: Logger = Logger(label: "kakapo")) throws {
        engine = try Engine(configuration: configuration, logger: logger)
        try engine.start()
        protocolClass = KakapoURLProtocol.register(engine)
    }

    /// Builds one from the essentials: a cassette (nil for none), a mode, and an upstream for the modes
    /// that forward.
    public convenience init(cassette: String? = nil, mode: ProxyMode = .replay, upstream: String? = nil) throws {
        try self.init(configuration: .essentials(cassette: cassette, mode: mode, upstream: upstream))
    }

    /// A configuration whose sessions Kakapo answers (its protocol class goes first). Start from `base`
    /// (an ephemeral configuration by default) to keep its other settings.
    public func sessionConfiguration(_ base: URLSessionConfiguration = .ephemeral) -> URLSessionConfiguration {
        let configuration = base
        configuration.protocolClasses = [protocolClass] + (base.protocolClasses ?? [])
        return configuration
    }

    #if canImport(Darwin)
        /// Answers every http and https request of `URLSession.shared` (and of sessions made without
        /// `sessionConfiguration()`, where Foundation consults registered classes). What no route,
        /// resource or recording answers goes to the upstream when one is configured, and is a clear miss
        /// otherwise. Not on Linux: corelibs Foundation tries its own HTTP protocol before any registered
        /// class, so only sessions made from `sessionConfiguration()` can be answered there.
        public func enable() {
            KakapoURLProtocol.setGlobal(engine)
            _ = URLProtocol.registerClass(KakapoURLProtocol.self)
        }

        /// Stops answering `URLSession.shared`.
        public func disable() {
            KakapoURLProtocol.setGlobal(nil, ifCurrent: engine)
            URLProtocol.unregisterClass(KakapoURLProtocol.self)
        }
    #endif

    /// Stops answering, saves the cassette when recording, and returns what the run did.
    @discardableResult
    public func shutdown() async -> ProxySummary {
        KakapoURLProtocol.setGlobal(nil, ifCurrent: engine)
        KakapoURLProtocol.unregister(slot: (protocolClass as? KakapoURLProtocol.Type)?.slot ?? -1)
        return await engine.shutdown()
    }
}
