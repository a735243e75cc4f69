import Synchronization

/// Recorded answers' heads prepared for the wire on first use and kept, by position in the server's
/// cassette (`Answer.replay`), for up to `limit` of them (answers past it are prepared each time, so a
/// cassette of 100,000 recordings does not keep 100,000 sets of headers). Positions of the interactions
/// loaded at start never change during a run; an answer whose recorded times move with the clock
/// (`Answer.replaySecond`) is kept for the second it was made in, and made again in the next.
final class PreparedReplies: Sendable {
    private let cache = Mutex<[Int: (second: Int64, response: PreparedResponse)]>([:])
    private let limit: Int

    init(limit: Int = 16_384) { self.limit = limit }

    func prepared(_ position: Int, second: Int64 = 0, make: () -> PreparedResponse) -> PreparedResponse {
        if let found = cache.withLock({ $0[position] }), found.second == second { return found.response }
        let made = make()
        cache.withLock { cache in
            if cache.count < limit || cache[position] != nil { cache[position] = (second, made) }
        }
        return made
    }
}
