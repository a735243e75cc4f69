import KakapoHTTP
import Synchronization

/// The heads (and bodies, with `--shift-time-json`) of the server cassette's recordings with their times
/// moved to now (`ReplayTime`), by position, for the second they were moved to: a replay reads and writes
/// its dates once a second per recording, not once per request. At most `limit` recordings are kept; past it
/// they are moved each time.
final class MovedReplies: Sendable {
    typealias Moved = (headers: HTTP.Headers, body: [UInt8]?)

    private let cache = Mutex<[Int: (second: Int64, moved: Moved?)]>([:])
    private let limit: Int

    init(limit: Int = 16_384) { self.limit = limit }

    /// The recording at `position` moved to `second`, made by `make` (nil: nothing to move) when this second
    /// has none yet.
    func moved(_ position: Int, second: Int64, make: () -> Moved?) -> Moved? {
        if let found = cache.withLock({ $0[position] }), found.second == second { return found.moved }
        let made = make()
        cache.withLock { cache in
            if cache.count < limit || cache[position] != nil { cache[position] = (second, made) }
        }
        return made
    }
}
