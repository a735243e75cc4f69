import NIOConcurrencyHelpers

/// Recorded answers prepared for the wire on first use and kept, by position in the cassette.
/// Positions of the interactions loaded at start never change during a run, so the cache never goes
/// stale.
final class PreparedReplies: Sendable {
    private let cache = NIOLockedValueBox<[Int: PreparedResponse]>([:])

    func prepared(_ position: Int, make: () -> PreparedResponse) -> PreparedResponse {
        if let found = cache.withLockedValue({ $0[position] }) { return found }
        let made = make()
        cache.withLockedValue { $0[position] = made }
        return made
    }
}
