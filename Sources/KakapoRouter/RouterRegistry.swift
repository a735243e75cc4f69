import KakapoHTTP
import Synchronization

/// Every router of a server: the default one (any host, no prefix) and the ones registered for a base
/// URL, as the original Kakapo had them. A request goes to the most specific router whose base matches
/// and which has a route for it.
public final class RouterRegistry: Sendable {
    /// The router for any host and path.
    public let router = Router(base: .any)
    private let scoped = Mutex<[Router]>([])
    private let scopedCount = Atomic<Int>(0)

    public init() {}

    /// The router for `baseURL` (`http://api.test.com/v1` or `/v1`); asking twice gives the same router.
    public func register(_ baseURL: String) throws(RouterError) -> Router {
        let base = try BaseURL(baseURL)
        if base == .any { return router }
        return scoped.withLock { routers in
            if let existing = routers.first(where: { $0.base == base }) { return existing }
            let created = Router(base: base)
            routers.append(created)
            scopedCount.add(1, ordering: .releasing)
            routers.sort { $0.base.specificity > $1.base.specificity }
            return created
        }
    }

    /// False while no router has a route, so the pipeline can skip routing altogether.
    public var hasRoutes: Bool {
        if !router.isEmpty { return true }
        guard scopedCount.load(ordering: .acquiring) > 0 else { return false }
        return scoped.withLock { $0.contains { !$0.isEmpty } }
    }

    /// Checks every router's routes; throws the first invalid or conflicting pattern.
    public func validate() throws(RouterError) {
        try router.validate()
        for scopedRouter in scoped.withLock({ $0 }) { try scopedRouter.validate() }
    }

    /// The route for `request`, or nil to pass it on to the next layer. Absolute-form targets
    /// (`GET http://api.test.com/v1/users`, as sent to a forward proxy) carry their own host.
    public func match(_ request: HTTP.Request) -> RouteMatch? {
        let (host, path) = RouterRegistry.hostAndPath(request)
        for scopedRouter in scoped.withLock({ $0 }) {
            if let relative = scopedRouter.base.relativePath(host: host, path: path),
                let found = scopedRouter.match(method: request.method, path: relative)
            {
                return found
            }
        }
        return router.match(method: request.method, path: path)
    }

    /// The host a request names (absolute-form target, else `Host`) and its path without the query.
    package static func hostAndPath(_ request: HTTP.Request) -> (String?, String) {
        let path = request.path
        // Origin-form targets (the usual case) start with '/'; only absolute-form ones need parsing.
        if path.utf8.first != UInt8(ascii: "/"), path.hasPrefix("http"), let separator = path.range(of: "://") {
            let rest = path[separator.upperBound...]
            let slash = rest.firstIndex(of: "/") ?? rest.endIndex
            return (String(rest[..<slash]), slash == rest.endIndex ? "/" : String(rest[slash...]))
        }
        return (request.headers["Host"], path)
    }
}
