import Dispatch
import KakapoStreams
import KakapoUpstream
import Synchronization

/// `GET /__kakapo/events`: journal entries as server-sent events, to every reader that follows them.
///
/// The request's path only queues an event in `InspectorLog` (while someone follows). Every `interval`, on a
/// queue of its own, the queued events are written as SSE once and handed to each reader's `LiveResponse` in
/// pieces of at most `pieceLimit` bytes, so a burst of requests costs one write per piece per reader, not
/// one per request. A reader whose client is more than `window` bytes behind gets nothing more (the
/// `LiveResponse` refuses it) and the events it missed are counted; once its client caught up (the
/// response's resumer runs) it is told, with `event: dropped`, how many it missed after which id. So a reader
/// that does not read costs at most `window` bytes and never holds the proxy back. A reader that leaves is
/// forgotten on the next tick; `finishAll` (shutdown) ends every stream.
package final class InspectorEvents: @unchecked Sendable {
    // @unchecked Sendable: `readers`, `timer` and `closed` are read and written only on `queue`.
    private let log: InspectorLog
    private let queue = DispatchQueue(label: "kakapo.inspector-events")
    private var readers: [Reader] = []
    private var timer: DispatchSourceTimer?
    private var closed = false
    private let nextReader = Atomic<Int>(0)
    /// Readers opened and not yet let go (counted at once, where `readers` is filled on `queue` later).
    private let openReaders = Atomic<Int>(0)
    /// The most readers that may follow the events at once: each may hold up to `window` bytes its client
    /// has not taken, so their number is bounded as well as their size.
    package static let readerLimit = 32
    /// How often queued events go out.
    let interval: DispatchTimeInterval
    /// How long a stream may stay silent before it gets a `: keep-alive` comment.
    let keepAliveNanoseconds: UInt64
    /// How many bytes a reader's client may be behind before it gets nothing more.
    let window: Int
    /// The most bytes handed to a reader at once.
    static let pieceLimit = 64 << 10
    /// How long a reader may take nothing before it is let go: a client that stopped reading for good (or
    /// a stream whose connection went before its answer was written) holds its window no longer.
    static let stuckNanoseconds: UInt64 = 120_000_000_000

    /// One reader, touched only on `queue`.
    private final class Reader {
        let number: Int
        let live: LiveResponse
        /// The last id delivered or dropped: later batches skip what is not above it.
        var lastID: Int
        /// Events missed since the reader was last told.
        var dropped = 0
        /// The last id delivered before the first of those.
        var droppedAfter = 0
        /// The client is behind: nothing more is handed over until the resumer runs.
        var paused = false {
            didSet { if paused && !oldValue { pausedSince = DispatchTime.now().uptimeNanoseconds } }
        }
        var pausedSince: UInt64 = 0
        var lastWrite = DispatchTime.now().uptimeNanoseconds

        init(number: Int, live: LiveResponse, lastID: Int) {
            self.number = number
            self.live = live
            self.lastID = lastID
        }
    }

    package init(
        log: InspectorLog, interval: DispatchTimeInterval = .milliseconds(50), keepAliveSeconds: Int = 15,
        window: Int = 1 << 20
    ) {
        self.log = log
        self.interval = interval
        self.keepAliveNanoseconds = UInt64(max(1, keepAliveSeconds)) * 1_000_000_000
        self.window = window
    }

    /// Opens a stream: the events held after `after` (all of them for nil), unless `backlog` is false, then
    /// each new one. The answer's body; it ends at `finishAll`. Nil when `readerLimit` readers follow
    /// already.
    package func open(after: Int?, backlog: Bool) -> LiveResponse? {
        guard openReaders.add(1, ordering: .relaxed).newValue <= Self.readerLimit else {
            openReaders.subtract(1, ordering: .relaxed)
            return nil
        }
        let number = nextReader.wrappingAdd(1, ordering: .relaxed).newValue
        let resumer = TransferResumer { [weak self] in
            guard let self else { return }
            self.queue.async {
                self.readers.first { $0.number == number }?.paused = false
            }
        }
        let live = LiveResponse(recording: .whole, resumer: resumer, window: window)
        // Without the backlog, the stream starts after the last request journaled now, when it is asked for:
        // a request answered before the reader is registered below is still its to get (from the log).
        let start = backlog ? (after ?? 0) : max(after ?? 0, log.lastID)
        queue.async { [self] in
            if closed {
                openReaders.subtract(1, ordering: .relaxed)
                live.finish()
                return
            }
            // From now on new events are queued; what is held up to then comes from the log.
            log.follow(true)
            let reader = Reader(number: number, live: live, lastID: start)
            _ = live.append(Array("retry: 2000\n\n".utf8))
            let held = log.events(after: reader.lastID)
            let (bytes, ends) = Self.encode(held)
            deliver(bytes, ends: ends, ids: held.map(\.id), to: reader)
            readers.append(reader)
            startTimer()
        }
        return live
    }

    /// Ends every stream (after the events queued so far) and refuses new ones: Kakapo is stopping.
    package func finishAll() {
        queue.sync {
            guard !closed else { return }
            tick()
            closed = true
            for reader in readers { reader.live.finish() }
            openReaders.subtract(readers.count, ordering: .relaxed)
            readers = []
            stopTimer()
            log.follow(false)
        }
    }

    /// How many readers follow the events now (for tests).
    package var readerCount: Int { queue.sync { readers.count } }

    deinit { timer?.cancel() }

    private func startTimer() {
        guard timer == nil else { return }
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + interval, repeating: interval, leeway: .milliseconds(10))
        timer.setEventHandler { [weak self] in self?.tick() }
        timer.resume()
        self.timer = timer
    }

    private func stopTimer() {
        timer?.cancel()
        timer = nil
    }

    /// On `queue`: hands the queued events to every reader, tells readers that caught up what they missed,
    /// keeps quiet streams alive and forgets readers that left.
    private func tick() {
        let (events, droppedAfterThem) = log.takePending()
        let (bytes, ends) = Self.encode(events)
        let ids = events.map(\.id)
        let now = DispatchTime.now().uptimeNanoseconds
        let before = readers.count
        readers.removeAll { reader in
            if reader.live.isCancelled {
                // The client left: the stream still ends, so its connection's answer is over and no longer in
                // flight (shutdown waited out its whole grace period for such a reader).
                reader.live.finish(broken: true)
                return true
            }
            if reader.paused && now > reader.pausedSince && now - reader.pausedSince > Self.stuckNanoseconds {
                // Broken off: its connection closes once (if ever) the client takes what was written.
                reader.live.finish(broken: true)
                return true
            }
            deliver(bytes, ends: ends, ids: ids, to: reader)
            if droppedAfterThem > 0 {
                // Queued for nobody: every reader misses them, after what it got.
                if reader.dropped == 0 { reader.droppedAfter = reader.lastID }
                reader.dropped += droppedAfterThem
            }
            if reader.dropped > 0 && !reader.paused {
                let notice =
                    "event: dropped\ndata: {\"dropped\":\(reader.dropped),\"after\":\(reader.droppedAfter)}\n\n"
                if append(Array(notice.utf8), to: reader) { reader.dropped = 0 }
            }
            if !reader.paused && now > reader.lastWrite && now - reader.lastWrite >= keepAliveNanoseconds {
                _ = append(Array(": keep-alive\n\n".utf8), to: reader)
            }
            if reader.live.isCancelled {
                reader.live.finish(broken: true)
                return true
            }
            return false
        }
        openReaders.subtract(before - readers.count, ordering: .relaxed)
        if readers.isEmpty {
            stopTimer()
            log.follow(false)
        }
    }

    /// On `queue`: hands `bytes` (events ending at `ends`, with `ids`) to `reader`, skipping those it had, in
    /// pieces of at most `pieceLimit` bytes; what it cannot take now is counted as dropped.
    private func deliver(_ bytes: [UInt8], ends: [Int], ids: [Int], to reader: Reader) {
        guard var first = ids.firstIndex(where: { $0 > reader.lastID }) else { return }
        while first < ids.count {
            let start = first == 0 ? 0 : ends[first - 1]
            var last = first
            while last + 1 < ids.count && ends[last + 1] - start <= Self.pieceLimit { last += 1 }
            let delivered = append(Array(bytes[start..<ends[last]]), to: reader)
            if !delivered {
                if reader.dropped == 0 { reader.droppedAfter = reader.lastID }
                reader.dropped += last - first + 1
            }
            reader.lastID = ids[last]
            first = last + 1
        }
    }

    /// On `queue`: appends `bytes` to the reader's stream; false when it cannot take them (its client is
    /// behind, or gone).
    private func append(_ bytes: [UInt8], to reader: Reader) -> Bool {
        guard !reader.paused, !reader.live.isCancelled else { return false }
        switch reader.live.append(bytes) {
        case .proceed:
            reader.lastWrite = DispatchTime.now().uptimeNanoseconds
            return true
        case .pause:
            reader.paused = true
            return false
        case .stop:
            return false
        }
    }

    /// The events as server-sent events, back to back, and where each one ends.
    private static func encode(_ events: [InspectorEvent]) -> (bytes: [UInt8], ends: [Int]) {
        var bytes: [UInt8] = []
        var ends: [Int] = []
        ends.reserveCapacity(events.count)
        bytes.reserveCapacity(events.count * 400)
        for event in events {
            bytes.append(contentsOf: "id: ".utf8)
            bytes.append(contentsOf: String(event.id).utf8)
            bytes.append(contentsOf: "\nevent: request\ndata: ".utf8)
            event.json(into: &bytes)
            bytes.append(contentsOf: "\n\n".utf8)
            ends.append(bytes.count)
        }
        return (bytes, ends)
    }
}
