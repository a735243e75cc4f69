import Synchronization

/// Counts requests between their arrival and the last byte of their answer, so shutdown can wait for
/// them to finish: `drained(within:)` returns when the count reaches zero or the time is up, woken by the
/// last `end()`, with no polling.
final class InFlightTracker: Sendable {
    private struct State {
        var count = 0
        var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
        var nextWaiter = 0
    }

    private let state = Mutex(State())

    func begin() { state.withLock { $0.count += 1 } }

    func end() {
        let woken = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.count -= 1
            guard state.count == 0, !state.waiters.isEmpty else { return [] }
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in woken { waiter.resume() }
    }

    var current: Int { state.withLock { $0.count } }

    /// Waits until no request is in flight, or `limit` has passed.
    func drained(within limit: Duration) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.untilIdle() }
            group.addTask { try? await Task.sleep(for: limit) }
            await group.next()
            group.cancelAll()
        }
    }

    /// Returns once the count is zero, or at once when the waiting task is cancelled.
    private func untilIdle() async {
        let id = state.withLock { state -> Int in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLock { state -> Bool in
                    if state.count == 0 || Task.isCancelled { return true }
                    state.waiters[id] = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.resume()
        }
    }
}
