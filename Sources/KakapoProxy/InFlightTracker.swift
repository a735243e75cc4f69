import Synchronization

/// Counts requests between their arrival and the last byte of their answer, so shutdown can wait for
/// them to finish.
final class InFlightTracker: Sendable {
    private let count = Atomic<Int>(0)

    func begin() { count.add(1, ordering: .relaxed) }
    func end() { count.subtract(1, ordering: .releasing) }
    var current: Int { count.load(ordering: .acquiring) }
}
