import Synchronization

/// The bytes of request bodies held in memory by every connection of a server together, against one
/// limit: a request whose body would go past it is answered 503 instead of being read, so many large
/// uploads at once cannot exhaust memory (each is within the per-request limit, their sum is not).
final class BodyBudget: Sendable {
    /// The most bytes held at once.
    let limit: Int
    private let used = Atomic<Int>(0)

    init(limit: Int) {
        self.limit = limit
    }

    /// Takes `bytes` from the budget; false, taking nothing, when they do not fit.
    func reserve(_ bytes: Int) -> Bool {
        guard bytes > 0 else { return true }
        var current = used.load(ordering: .relaxed)
        while true {
            guard bytes <= limit - current else { return false }
            let (exchanged, original) = used.compareExchange(
                expected: current, desired: current + bytes, ordering: .relaxed)
            if exchanged { return true }
            current = original
        }
    }

    /// Gives back `bytes` taken with `reserve`.
    func release(_ bytes: Int) {
        guard bytes > 0 else { return }
        used.subtract(bytes, ordering: .relaxed)
    }

    /// The bytes that could be taken now.
    var available: Int { limit - used.load(ordering: .relaxed) }
}

/// The budget a request's buffered body holds until the request is answered. Given back exactly once:
/// by `release()`, or when the last reference goes, so an error path that drops the request cannot keep
/// its bytes.
final class BodyReservation: Sendable {
    private let budget: BodyBudget
    private let bytes: Atomic<Int>

    init(_ bytes: Int, of budget: BodyBudget) {
        self.budget = budget
        self.bytes = Atomic(bytes)
    }

    func release() {
        budget.release(bytes.exchange(0, ordering: .relaxed))
    }

    deinit { release() }
}
