import KakapoHTTP
import Synchronization

/// The inspector's memory of recent requests: each journaled request (admin ones aside) as an
/// `InspectorRecord`, the most recent `capacity` of them, their details (requests and answers) within
/// `detailByteLimit` bytes, the oldest details dropped first. While someone follows `/__kakapo/events`, each
/// new event is also queued for `InspectorEvents` (within `pendingByteLimit`; past it, counted as dropped).
///
/// Ids are given out under the same lock that appends, so records are in id order. A request costs one
/// lock and no copying or formatting.
package final class InspectorLog: Sendable {
    struct State {
        var nextID = 1
        /// Oldest first; entries before `start` are gone (compacted once they are half the array).
        var records: [InspectorRecord] = []
        var start = 0
        /// Bytes of the details held.
        var detailBytes = 0
        /// Records before this index hold no detail any more.
        var detailStart = 0
        /// Whether new events are queued for the event stream.
        var following = false
        var pending: [InspectorEvent] = []
        var pendingBytes = 0
        /// Events not queued because the queue was full, since the last `takePending`.
        var pendingDropped = 0

        var count: Int { records.count - start }
    }

    private let state = Mutex(State())
    let capacity: Int
    let detailByteLimit: Int
    let pendingByteLimit: Int

    package init(capacity: Int = 1000, detailByteLimit: Int = 32 << 20, pendingByteLimit: Int = 4 << 20) {
        self.capacity = capacity
        self.detailByteLimit = detailByteLimit
        self.pendingByteLimit = pendingByteLimit
    }

    /// An id for a request the inspector does not keep (an admin request).
    func takeID() -> Int {
        state.withLock { state in
            defer { state.nextID += 1 }
            return state.nextID
        }
    }

    /// Keeps `record` under a new id and returns it.
    func append(_ record: InspectorRecord) -> InspectorEvent {
        var record = record
        return state.withLock { state -> InspectorEvent in
            record.event.id = state.nextID
            state.nextID += 1
            let event = record.event
            if state.following {
                let size = event.target.utf8.count + 2 * event.host.utf8.count + 256
                // Once one is dropped, so is every one after it until the stream takes the queue: what it
                // gets is then always newer than what it missed.
                if state.pendingDropped == 0 && state.pendingBytes + size <= pendingByteLimit {
                    state.pending.append(event)
                    state.pendingBytes += size
                } else {
                    state.pendingDropped += 1
                }
            }
            state.detailBytes += record.detail?.cost ?? 0
            state.records.append(record)
            if state.count > capacity {
                state.detailBytes -= state.records[state.start].detail?.cost ?? 0
                state.records[state.start].detail = nil
                state.start += 1
                state.detailStart = max(state.detailStart, state.start)
                if state.start >= 64 && state.start * 2 >= state.records.count {
                    state.records.removeFirst(state.start)
                    state.detailStart -= state.start
                    state.start = 0
                }
            }
            // The oldest details go first; the newest one stays even when it alone is over.
            while state.detailBytes > detailByteLimit && state.detailStart < state.records.count - 1 {
                state.detailBytes -= state.records[state.detailStart].detail?.cost ?? 0
                state.records[state.detailStart].detail = nil
                state.detailStart += 1
            }
            return event
        }
    }

    /// The record with `id`, while held.
    package func record(_ id: Int) -> InspectorRecord? {
        state.withLock { state in
            guard let index = Self.index(of: id, in: state) else { return nil }
            return state.records[index]
        }
    }

    /// Notes where `id` was saved; false when it is no longer held or was saved already.
    package func markSaved(_ id: Int, cassette: String, interaction: Int) -> Bool {
        state.withLock { state in
            guard let index = Self.index(of: id, in: state), state.records[index].saved == nil else { return false }
            state.records[index].saved = (cassette, interaction)
            return true
        }
    }

    /// The events held with an id above `id`, oldest first.
    package func events(after id: Int) -> [InspectorEvent] {
        state.withLock { state in
            var low = state.start
            var high = state.records.count
            while low < high {
                let middle = (low + high) / 2
                if state.records[middle].event.id <= id { low = middle + 1 } else { high = middle }
            }
            return state.records[low...].map(\.event)
        }
    }

    /// The last id given out (0 before the first).
    package var lastID: Int { state.withLock { $0.nextID - 1 } }

    /// Starts or stops queueing new events for the event stream; returns the last id given out, so a reader
    /// starting now knows which events it will get from the queue.
    @discardableResult
    func follow(_ following: Bool) -> Int {
        state.withLock { state in
            state.following = following
            if !following {
                state.pending = []
                state.pendingBytes = 0
                state.pendingDropped = 0
            }
            return state.nextID - 1
        }
    }

    /// The events queued since the last call, and how many were dropped for want of room after them (all newer
    /// than the last one returned).
    func takePending() -> (events: [InspectorEvent], dropped: Int) {
        state.withLock { state in
            defer {
                state.pending = []
                state.pendingBytes = 0
                state.pendingDropped = 0
            }
            return (state.pending, state.pendingDropped)
        }
    }

    /// Forgets every record (`DELETE /__kakapo/requests`); ids go on from where they were.
    package func clear() {
        state.withLock { state in
            state.records = []
            state.start = 0
            state.detailStart = 0
            state.detailBytes = 0
        }
    }

    /// What the held details cost, in bytes (for tests of the bound).
    package var detailBytes: Int { state.withLock { $0.detailBytes } }

    private static func index(of id: Int, in state: State) -> Int? {
        var low = state.start
        var high = state.records.count
        while low < high {
            let middle = (low + high) / 2
            let found = state.records[middle].event.id
            if found == id { return middle }
            if found < id { low = middle + 1 } else { high = middle }
        }
        return nil
    }
}
