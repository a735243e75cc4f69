/// The journal's most recent entries, oldest first: appended at the end, dropped from the front, each in
/// constant time (amortised), without NIO's `CircularBuffer`.
struct RecentEntries: Sequence {
    private var storage: [RequestJournal.Entry] = []
    /// Entries before this index were dropped; compacted once they are half of `storage`.
    private var start = 0

    var count: Int { storage.count - start }

    mutating func append(_ entry: RequestJournal.Entry) { storage.append(entry) }

    /// Drops and returns the oldest entry; the journal calls it only when there is one.
    mutating func removeFirst() -> RequestJournal.Entry {
        let first = storage[start]
        start += 1
        if start >= 64 && start * 2 >= storage.count {
            storage.removeFirst(start)
            start = 0
        }
        return first
    }

    func makeIterator() -> ArraySlice<RequestJournal.Entry>.Iterator { storage[start...].makeIterator() }
}
