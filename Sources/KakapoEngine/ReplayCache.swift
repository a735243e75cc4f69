import Synchronization

/// What a replay makes from a recording of the server's cassette, kept by the recording's position for the
/// second it was made for: the transport's wire form (`PreparedReplies` in KakapoProxy) and the recording
/// with its times moved to now (`CassetteLayer.movingTime`). Positions of the interactions loaded at start
/// never change during a run; a value made for a second (`Answer.replaySecond`; 0 for one whose bytes never
/// change) is made again in the next. At most `limit` recordings are kept (past it they are made each time,
/// so a cassette of 100,000 recordings does not keep 100,000 values).
package final class ReplayCache<Value: Sendable>: Sendable {
    private let cache = Mutex<[Int: (second: Int64, value: Value)]>([:])
    private let limit: Int

    package init(limit: Int = 16_384) { self.limit = limit }

    /// The value of `position` for `second`, made by `make` when there is none for that second yet.
    package func value(_ position: Int, second: Int64 = 0, make: () -> Value) -> Value {
        if let found = cache.withLock({ $0[position] }), found.second == second { return found.value }
        let made = make()
        cache.withLock { cache in
            if cache.count < limit || cache[position] != nil { cache[position] = (second, made) }
        }
        return made
    }
}
