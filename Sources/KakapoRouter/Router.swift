import KakapoHTTP
import KakapoJSON
import Synchronization

/// A route handler: any `Serializable` answers 200 with JSON; a `Response` sets status and headers;
/// nil answers 200 with an empty body. A thrown error answers with its status (500 by default).
public typealias RouteHandler = @Sendable (Request) async throws -> (any Serializable)?

/// Route handlers for one base URL, registered by method and path pattern.
///
/// ```swift
/// router.get("/users/:id") { request in store.find(User.self, id: try request.parameters.require("id")) }
/// // GET /users/3 -> 200 {"id":"3","name":"User 3"}
/// ```
///
/// Routes can be added at any time; the routing table is rebuilt (and checked for conflicts) on the
/// first lookup after a change.
public final class Router: Sendable {
    /// The scheme-less host this router answers for (nil for any host) and its path prefix.
    public let base: BaseURL
    private struct State {
        var entries: [RouteTrie.Entry] = []
        var invalid: [RouterError] = []
        var trie: Result<RouteTrie, RouterError>?
        var latency: Duration = .zero
    }
    private let state = Mutex(State())
    /// Routes and invalid patterns registered so far, readable without the lock on every request.
    private let registrations = Atomic<Int>(0)

    init(base: BaseURL) { self.base = base }

    /// How long every answer of this router is delayed, without blocking any thread.
    public var latency: Duration {
        get { state.withLock { $0.latency } }
        set { state.withLock { $0.latency = newValue } }
    }

    /// Registers `handler` for `method` (nil for any method) and `pattern`. An invalid pattern is
    /// reported by `validate()`, which the server calls when it starts.
    public func on(_ pattern: String, method: HTTP.Method?, handler: @escaping RouteHandler) {
        registrations.add(1, ordering: .releasing)
        state.withLock { state in
            state.trie = nil
            do {
                let parsed = try RoutePattern(pattern)
                state.entries.append(RouteTrie.Entry(method: method, pattern: parsed, handler: handler))
            } catch {
                state.invalid.append(error as? RouterError ?? .invalidPattern(pattern, "\(error)"))
            }
        }
    }

    public func get(_ pattern: String, handler: @escaping RouteHandler) { on(pattern, method: .get, handler: handler) }
    public func post(_ pattern: String, handler: @escaping RouteHandler) {
        on(pattern, method: .post, handler: handler)
    }
    public func put(_ pattern: String, handler: @escaping RouteHandler) { on(pattern, method: .put, handler: handler) }
    public func patch(_ pattern: String, handler: @escaping RouteHandler) {
        on(pattern, method: .patch, handler: handler)
    }
    public func delete(_ pattern: String, handler: @escaping RouteHandler) {
        on(pattern, method: .delete, handler: handler)
    }
    /// `delete`, under the original Kakapo's name.
    public func del(_ pattern: String, handler: @escaping RouteHandler) {
        on(pattern, method: .delete, handler: handler)
    }
    public func head(_ pattern: String, handler: @escaping RouteHandler) {
        on(pattern, method: .head, handler: handler)
    }
    public func options(_ pattern: String, handler: @escaping RouteHandler) {
        on(pattern, method: .options, handler: handler)
    }
    /// Any method.
    public func any(_ pattern: String, handler: @escaping RouteHandler) { on(pattern, method: nil, handler: handler) }

    /// Builds the routing table; throws the first invalid or conflicting pattern, naming it.
    public func validate() throws(RouterError) {
        _ = try trie().get()
    }

    private func trie() -> Result<RouteTrie, RouterError> {
        state.withLock { state in
            if let trie = state.trie { return trie }
            if let error = state.invalid.first { return .failure(error) }
            let built = Result { () throws(RouterError) in try RouteTrie(state.entries) }
            state.trie = built
            return built
        }
    }

    /// The handler for a request whose path (relative to the base) is `path`.
    func match(method: HTTP.Method, path: String) -> RouteMatch? {
        guard case .success(let trie) = trie() else { return nil }
        let segments = path.split(separator: "/", omittingEmptySubsequences: true)
        guard let (entry, parameters) = trie.match(method: method, segments: segments) else { return nil }
        return RouteMatch(
            router: self, pattern: entry.pattern, handler: entry.handler, parameters: parameters, path: path)
    }

    /// True when no route has been registered.
    public var isEmpty: Bool { registrations.load(ordering: .acquiring) == 0 }
}

/// A route chosen for a request.
public struct RouteMatch: Sendable {
    public let router: Router
    public let pattern: RoutePattern
    let handler: RouteHandler
    public let parameters: RouteParameters
    /// The path relative to the router's base.
    public let path: String

    /// Runs the handler and turns its result into an HTTP response; errors become JSON error answers.
    public func respond(to request: HTTP.Request) async -> HTTP.Response {
        let latency = router.latency
        let response: HTTP.Response
        do {
            let result = try await handler(Request(http: request, path: path, parameters: parameters))
            response = Response.http(for: result)
        } catch {
            response = RouteMatch.errorResponse(error, pattern: pattern, method: request.method)
        }
        if latency > .zero { try? await Task.sleep(for: latency) }
        return response
    }

    static func errorResponse(_ error: any Error, pattern: RoutePattern, method: HTTP.Method) -> HTTP.Response {
        let status: Int
        let message: String
        if let known = error as? any HTTPResponseError {
            status = known.status
            message = known.message
        } else {
            status = 500
            message = "\(error)"
        }
        let body: JSONValue = ["error": .string(message), "route": .string("\(method) \(pattern)")]
        return HTTP.Response(
            status: status, headers: ["Content-Type": "application/json"], body: JSONWriter().write(body))
    }
}
