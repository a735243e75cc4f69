import KakapoResources
import KakapoRouter

/// What serves an `Engine` (the socket server, Kakapo in process): its configuration, routes, resources and
/// pipeline are the engine's, reached by the same names as on the engine.
public protocol EngineHost {
    /// The engine that answers.
    var engine: Engine { get }
}

extension EngineHost {
    /// The configuration as resolved (`once` decided).
    public var configuration: ProxyConfiguration { engine.configuration }
    /// The pipeline: routes, Store resources, the cassette session, the journal.
    public var pipeline: RequestPipeline { engine.pipeline }
    /// The router for any host and path: `server.router.get("/users/:id") { request in ... }`.
    public var router: Router { engine.router }
    /// A router for requests under `baseURL` only (`http://api.test.com/v1` or `/v1`); the most specific
    /// router that has a route for a request answers it.
    public func register(_ baseURL: String) throws(RouterError) -> Router { try engine.register(baseURL) }
    /// REST resources backed by a Store: `server.resources.add(User.self, at: "/users", in: store)`.
    public var resources: StoreResources { engine.resources }
}
