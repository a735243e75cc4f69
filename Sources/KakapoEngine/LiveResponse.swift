import Foundation
import KakapoCassette
import KakapoUpstream
import Synchronization

/// A streamed upstream answer on its way through: libcurl's thread appends body bytes as they arrive,
/// the connection's event loop takes them as soon as it is attached (bytes that come earlier wait here),
/// and the recording gets timed chunks as `recording` says (one per server-sent event or line, or the
/// pieces of a chunked answer that paused on the way) with their time offsets.
///
/// Backpressure: the consumer reports bytes the socket has taken (`delivered`); while more than
/// `window` bytes are on their way, `append` pauses the transfer (no thread waits; the upstream's TCP
/// window fills and it slows down) until the client has caught up. A consumer that goes away
/// (`cancel`) makes the transfer stop.
public final class LiveResponse: @unchecked Sendable {
    // @unchecked Sendable: every stored var below is read and written only with `lock` held.
    package enum Event: Sendable {
        case data([UInt8])
        case end
        /// The upstream broke off: the client's connection is closed without a final chunk, so it can
        /// tell the stream is incomplete.
        case broken
    }

    /// How the answer is recorded.
    let recording: StreamRecording
    /// How many bytes may be on their way to the client before the upstream is held.
    let window: Int
    private let lock = NSLock()
    private var waiting: [[UInt8]] = []
    private var finished = false
    private var broken = false
    private var cancelled = false
    private var keptWhole = true
    private var inFlight = 0
    /// The transfer is paused until the client catches up.
    private var paused = false
    private let resumer: TransferResumer
    private var consumer: (@Sendable (Event) -> Void)?
    private var events: [ResponseChunk] = []
    private var pending: [UInt8] = []
    private var pendingOffset: Double?
    /// For `.pieces`: where each piece ends in the body and when its first byte came.
    private var pieces: [(end: Int, offset: Double)] = []
    private var received = 0
    private var lastArrival: Double?
    /// The transfer was held since the last bytes (the client was behind): the gap is not the upstream's.
    private var heldSinceLastArrival = false
    private let started = ContinuousClock.now

    init(recording: StreamRecording, resumer: TransferResumer, window: Int = 1 << 20) {
        self.recording = recording
        self.resumer = resumer
        self.window = window
    }

    /// Body bytes from the upstream (libcurl's thread): taken, refused for now (`.pause`: the client is
    /// more than `window` bytes behind; the transfer is resumed once it catches up and delivers them
    /// again), or `.stop` once the consumer is gone.
    func append(_ bytes: [UInt8]) -> StreamDisposition {
        let offset = (ContinuousClock.now - started) / .milliseconds(1)
        lock.lock()
        if cancelled {
            lock.unlock()
            return .stop
        }
        if inFlight > window {
            paused = true
            heldSinceLastArrival = true
            lock.unlock()
            return .pause
        }
        inFlight += bytes.count
        record(bytes, at: offset)
        if consumer == nil { waiting.append(bytes) }
        let consumer = self.consumer
        lock.unlock()
        consumer?(.data(bytes))
        return .proceed
    }

    /// Notes `bytes`, arrived `offset` ms after the start, for the recording (with `lock` held).
    private func record(_ bytes: [UInt8], at offset: Double) {
        switch recording {
        case .whole:
            return
        case .pieces:
            received += bytes.count
            if let lastArrival, heldSinceLastArrival || offset - lastArrival < StreamRecording.pauseMilliseconds {
                pieces[pieces.count - 1].end = received
            } else {
                pieces.append((received, offset))
            }
            lastArrival = offset
            heldSinceLastArrival = false
        case .events, .lines:
            if pendingOffset == nil { pendingOffset = offset }
            pending += bytes
            for unit in recording.takeUnits(from: &pending) ?? [] {
                events.append(ResponseChunk(offsetMilliseconds: pendingOffset ?? offset, bytes: unit))
                pendingOffset = pending.isEmpty ? nil : offset
            }
        }
    }

    /// The consumer's socket took `count` bytes: the upstream may send that many more.
    package func delivered(_ count: Int) {
        lock.lock()
        inFlight -= count
        let resume = paused && inFlight <= window
        if resume { paused = false }
        lock.unlock()
        if resume { resumer.resume() }
    }

    /// The consumer is gone (the client closed its connection): the transfer stops (a paused one is
    /// resumed to hear it).
    package func cancel() {
        lock.lock()
        cancelled = true
        let resume = paused
        paused = false
        lock.unlock()
        if resume { resumer.resume() }
    }

    /// Whether the consumer went away before the end.
    package var isCancelled: Bool {
        lock.lock()
        defer { lock.unlock() }
        return cancelled
    }

    /// The body outgrew what is kept for a recording: the answer goes on, but is not recorded.
    func dropKeptBody() {
        lock.lock()
        keptWhole = false
        lock.unlock()
    }

    /// Whether the completion's response holds the whole body, so the answer can be recorded.
    var isKeptWhole: Bool {
        lock.lock()
        defer { lock.unlock() }
        return keptWhole
    }

    /// The upstream is done (`broken` when it failed): the consumer gets the end, and the recording its
    /// last chunk.
    func finish(broken: Bool = false) {
        lock.lock()
        finished = true
        self.broken = broken
        if !pending.isEmpty {
            events.append(ResponseChunk(offsetMilliseconds: pendingOffset ?? 0, bytes: pending))
            pending = []
        }
        let consumer = self.consumer
        lock.unlock()
        consumer?(broken ? .broken : .end)
    }

    /// Starts delivering to `consumer`: what arrived so far at once, the rest as it comes.
    package func attach(_ consumer: @escaping @Sendable (Event) -> Void) {
        // The consumer is installed only once nothing waits any more: until then `append` keeps queueing,
        // so bytes arriving while the earlier ones are handed over cannot overtake them, and the end
        // (from `finish` or from here) always comes after the last bytes.
        while true {
            lock.lock()
            if waiting.isEmpty {
                self.consumer = consumer
                let (finished, broken) = (self.finished, self.broken)
                lock.unlock()
                if finished { consumer(broken ? .broken : .end) }
                return
            }
            let batch = waiting
            waiting = []
            lock.unlock()
            for bytes in batch { consumer(.data(bytes)) }
        }
    }

    /// The timed chunks to record for the answer whose whole body is `body`, with offsets from its first
    /// byte; nil to record the body whole (an answer of announced length, one that came at once, or one
    /// whose chunks do not add up to `body`).
    func chunks(of body: [UInt8]) -> [ResponseChunk]? {
        lock.lock()
        defer { lock.unlock() }
        var timed: [ResponseChunk]
        switch recording {
        case .whole:
            return nil
        case .events, .lines:
            timed = events
        case .pieces:
            guard pieces.count > 1, pieces.last?.end == body.count else { return nil }
            var start = 0
            timed = pieces.map { piece in
                defer { start = piece.end }
                return ResponseChunk(offsetMilliseconds: piece.offset, bytes: Array(body[start..<piece.end]))
            }
        }
        guard timed.reduce(0, { $0 + $1.bytes.count }) == body.count else { return nil }
        guard let first = timed.first?.offsetMilliseconds else { return timed }
        return timed.map { ResponseChunk(offsetMilliseconds: $0.offsetMilliseconds - first, bytes: $0.bytes) }
    }
}
