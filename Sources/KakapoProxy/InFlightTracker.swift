import NIOConcurrencyHelpers

/// Counts requests between their arrival and the last byte of their answer, so shutdown can wait for
/// them to finish.
final class InFlightTracker: Sendable {
    private let count = NIOLockedValueBox(0)

    func begin() { count.withLockedValue { $0 += 1 } }
    func end() { count.withLockedValue { $0 -= 1 } }
    var current: Int { count.withLockedValue { $0 } }
}
