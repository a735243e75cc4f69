import Synchronization

/// Lets requests to a shared-store resource wait until its seed is in the database. The seed is put
/// there once; when that fails (the database was away), the next request tries again.
final class SeedGate: Sendable {
    private let work: @Sendable () async throws -> Void
    private let state = Mutex<(task: Task<Void, any Error>?, done: Bool)>((nil, false))

    init(_ work: @escaping @Sendable () async throws -> Void) {
        self.work = work
    }

    /// Starts seeding now, so the first request rarely waits.
    func start() {
        _ = current()
    }

    private func current() -> Task<Void, any Error>? {
        state.withLock { state in
            if state.done { return nil }
            if let task = state.task { return task }
            let task = Task { try await work() }
            state.task = task
            return task
        }
    }

    /// Returns once the seed is in; throws what seeding threw (and lets the next call try again).
    func wait() async throws {
        guard let task = current() else { return }
        do {
            try await task.value
            state.withLock { $0.done = true }
        } catch {
            state.withLock { state in
                if state.task == task { state.task = nil }
            }
            throw error
        }
    }
}
