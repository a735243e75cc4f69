import KakapoHTTP
import KakapoJSON
import Synchronization

/// The declarative routes of a server: those from routes files (replaced as a whole on reload) and those
/// added at run time through the admin API (tried first, the most recently added first, so a test can
/// override a file's route). Reading the table costs one lock; changes build a new table.
public final class StubRegistry: Sendable {
    /// Where a route came from.
    public enum Origin: String, Sendable {
        case file
        case runtime
    }

    private struct State {
        var file: [Stub] = []
        var runtime: [Stub] = []
        var nextRuntimeID = 1
        var table = StubTable.empty
    }

    private let state = Mutex(State())
    private let count = Atomic<Int>(0)

    public init() {}

    /// False while there is no route at all, so the server can skip this layer without a lock.
    public var hasRoutes: Bool { count.load(ordering: .acquiring) > 0 }

    /// The current table.
    package var table: StubTable { state.withLock { $0.table } }

    /// The answer of the first route that takes `request`, or nil.
    public func answer(_ request: HTTP.Request, recordedAt: @escaping () -> String? = { nil }) -> StubAnswer? {
        guard hasRoutes else { return nil }
        return table.answer(request, recordedAt: recordedAt)
    }

    /// Replaces the routes that came from files.
    public func replaceFileRoutes(_ routes: [Stub]) {
        update { $0.file = routes }
    }

    /// Adds a route at run time, reading it from `value`; its id is the one given, or a fresh `rN`.
    /// Throws when the route is invalid or its id is taken.
    @discardableResult
    public func addRuntimeRoute(_ value: JSONValue, context: DefinitionContext) throws(RoutesError) -> Stub {
        let id = state.withLock { state in
            defer { state.nextRuntimeID += 1 }
            return "r\(state.nextRuntimeID)"
        }
        let stub = try RoutesDefinition.route(value, id: id, context: context)
        let taken = state.withLock { state in
            (state.runtime + state.file).contains { $0.id == stub.id }
        }
        if taken { throw RoutesError(path: [.key("id")], message: "a route with the id \"\(stub.id)\" exists already") }
        update { $0.runtime.insert(stub, at: 0) }
        return stub
    }

    /// Removes the runtime route `id`; false when there is none (routes from files cannot be removed
    /// this way: they change with their file).
    @discardableResult
    public func removeRuntimeRoute(_ id: String) -> Bool {
        var removed = false
        update { state in
            let before = state.runtime.count
            state.runtime.removeAll { $0.id == id }
            removed = state.runtime.count != before
        }
        return removed
    }

    /// Removes every runtime route and returns how many there were; routes from files stay.
    @discardableResult
    public func removeRuntimeRoutes() -> Int {
        var removed = 0
        update { state in
            removed = state.runtime.count
            state.runtime.removeAll()
        }
        return removed
    }

    /// Every route in the order they are tried within one specificity, runtime first, with its origin.
    public var routes: [(Stub, Origin)] {
        state.withLock { state in state.runtime.map { ($0, .runtime) } + state.file.map { ($0, .file) } }
    }

    /// Whether a file route has this id.
    public func isFileRoute(_ id: String) -> Bool { state.withLock { $0.file.contains { $0.id == id } } }

    private func update(_ change: (inout State) -> Void) {
        state.withLock { state in
            change(&state)
            state.table = StubTable(state.runtime + state.file)
            count.store(state.runtime.count + state.file.count, ordering: .releasing)
        }
    }
}
