import KakapoCassette
import KakapoHTTP
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
public final class LiveResponse: Sendable {
    package enum Event: Sendable {
        case data([UInt8])
        case end
        /// The upstream broke off: the client's connection is closed without a final chunk, so it can
        /// tell the stream is incomplete.
        case broken
    }

    /// How the answer is recorded.
    package let recording: StreamRecording
    /// How many bytes may be on their way to the client before the upstream is held.
    package let window: Int
    private let resumer: TransferResumer
    private let started = ContinuousClock.now
    private let state: Mutex<State>

    private struct State {
        var waiting: [[UInt8]] = []
        var finished = false
        var trailers = HTTP.Headers()
        var broken = false
        var cancelled = false
        var keptWhole = true
        var inFlight = 0
        /// The transfer is paused until the client catches up.
        var paused = false
        var consumer: (@Sendable (Event) -> Void)?
        /// Runs (once) when the consumer leaves before the end: the recording of an abandoned stream.
        var onAbandoned: (@Sendable () -> Void)?
        /// Run once when the upstream is done (`whenFinished`).
        var onFinished: [@Sendable () -> Void] = []
        var events: [ResponseChunk] = []
        var pending: [UInt8] = []
        var pendingOffset: Double?
        /// For `.pieces`: where each piece ends in the body and when its first byte came.
        var pieces: [(end: Int, offset: Double)] = []
        /// For `.pieces` kept for a break: the body so far (the upstream client hands it over only for an
        /// answer that ended); nil when not kept or once it outgrew what is kept.
        var piecesBody: [UInt8]?
        var received = 0
        var lastArrival: Double?
        /// The transfer was held since the last bytes (the client was behind): the gap is not the upstream's.
        var heldSinceLastArrival = false

        /// The events or lines so far, the last one as far as it came.
        var eventsSoFar: [ResponseChunk] {
            pending.isEmpty ? events : events + [ResponseChunk(offsetMilliseconds: pendingOffset ?? 0, bytes: pending)]
        }

        /// Notes `bytes`, arrived `offset` ms after the start, for a recording made as `recording` says.
        mutating func record(_ bytes: [UInt8], at offset: Double, as recording: StreamRecording) {
            switch recording {
            case .whole:
                return
            case .pieces:
                received += bytes.count
                piecesBody? += bytes
                if let lastArrival, heldSinceLastArrival || offset - lastArrival < StreamRecording.pauseMilliseconds {
                    pieces[pieces.count - 1].end = received
                } else {
                    pieces.append((received, offset))
                }
                lastArrival = offset
                heldSinceLastArrival = false
            case .events, .lines, .messages:
                if pendingOffset == nil { pendingOffset = offset }
                pending += bytes
                for unit in recording.takeUnits(from: &pending) ?? [] {
                    events.append(ResponseChunk(offsetMilliseconds: pendingOffset ?? offset, bytes: unit))
                    pendingOffset = pending.isEmpty ? nil : offset
                }
            }
        }
    }

    /// `keepsPiecesForBreak`: an answer recorded in pieces keeps its bytes here too, so that it can be
    /// recorded if the upstream breaks it off (`--record-broken-streams`) or its client abandons it.
    package init(
        recording: StreamRecording, resumer: TransferResumer, window: Int = 1 << 20, keepsPiecesForBreak: Bool = false
    ) {
        var state = State()
        if keepsPiecesForBreak && recording == .pieces { state.piecesBody = [] }
        self.state = Mutex(state)
        self.recording = recording
        self.resumer = resumer
        self.window = window
    }

    /// Body bytes from the upstream (libcurl's thread): taken, refused for now (`.pause`: the client is
    /// more than `window` bytes behind; the transfer is resumed once it catches up and delivers them
    /// again), or `.stop` once the consumer is gone.
    package func append(_ bytes: [UInt8]) -> StreamDisposition {
        let offset = (ContinuousClock.now - started) / .milliseconds(1)
        let (disposition, consumer) = state.withLock { state -> (StreamDisposition, (@Sendable (Event) -> Void)?) in
            if state.cancelled { return (.stop, nil) }
            if state.inFlight > window {
                state.paused = true
                state.heldSinceLastArrival = true
                return (.pause, nil)
            }
            state.inFlight += bytes.count
            state.record(bytes, at: offset, as: recording)
            if state.consumer == nil { state.waiting.append(bytes) }
            return (.proceed, state.consumer)
        }
        consumer?(.data(bytes))
        return disposition
    }

    /// The consumer's socket took `count` bytes: the upstream may send that many more.
    package func delivered(_ count: Int) {
        let resume = state.withLock { state -> Bool in
            state.inFlight -= count
            let resume = state.paused && state.inFlight <= window
            if resume { state.paused = false }
            return resume
        }
        if resume { resumer.resume() }
    }

    /// The consumer is gone (the client closed its connection): the transfer stops (a paused one is
    /// resumed to hear it).
    package func cancel() {
        let (resume, abandoned) = state.withLock { state -> (Bool, (@Sendable () -> Void)?) in
            state.cancelled = true
            // Only a consumer that leaves before the end abandons the stream, and only once.
            let abandoned = state.finished ? nil : state.onAbandoned
            state.onAbandoned = nil
            defer { state.paused = false }
            return (state.paused, abandoned)
        }
        if resume { resumer.resume() }
        abandoned?()
    }

    /// Runs `action` (once, on the thread that cancels) when the consumer leaves before the end: the client
    /// abandoned the stream. Runs at once when it already has.
    package func whenAbandoned(_ action: @escaping @Sendable () -> Void) {
        let now = state.withLock { state -> Bool in
            if state.cancelled { return !state.finished }
            state.onAbandoned = action
            return false
        }
        if now { action() }
    }

    /// The fields the upstream sent after the body (gRPC's `grpc-status`), once it has finished; read by
    /// the transport when it writes the end.
    package var trailers: HTTP.Headers { state.withLock { $0.trailers } }

    /// Whether the consumer went away before the end.
    package var isCancelled: Bool { state.withLock { $0.cancelled } }

    /// The body outgrew what is kept for a recording: the answer goes on, but is not recorded.
    package func dropKeptBody() {
        state.withLock { state in
            state.keptWhole = false
            state.piecesBody = nil
        }
    }

    /// Whether the completion's response holds the whole body, so the answer can be recorded.
    package var isKeptWhole: Bool { state.withLock { $0.keptWhole } }

    /// The upstream is done (`broken` when it failed): the consumer gets the end, and the recording its
    /// last chunk.
    package func finish(broken: Bool = false, trailers: HTTP.Headers = HTTP.Headers()) {
        let (consumer, finished) = state.withLock { state -> ((@Sendable (Event) -> Void)?, [@Sendable () -> Void]) in
            state.finished = true
            state.onAbandoned = nil
            state.trailers = trailers
            state.broken = broken
            state.events = state.eventsSoFar
            state.pending = []
            // Nothing comes after the end: the consumer is let go, as it usually holds this answer (the
            // connection's writer captures it to report what the socket took), a cycle that would keep both.
            defer {
                state.onFinished = []
                state.consumer = nil
            }
            return (state.consumer, state.onFinished)
        }
        consumer?(broken ? .broken : .end)
        for action in finished { action() }
    }

    /// Runs `action` once the upstream is done (`finish`), at once when it is already.
    package func whenFinished(_ action: @escaping @Sendable () -> Void) {
        let now = state.withLock { state -> Bool in
            if state.finished { return true }
            state.onFinished.append(action)
            return false
        }
        if now { action() }
    }

    /// Starts delivering to `consumer`: what arrived so far at once, the rest as it comes.
    package func attach(_ consumer: @escaping @Sendable (Event) -> Void) {
        // The consumer is installed only once nothing waits any more: until then `append` keeps queueing,
        // so bytes arriving while the earlier ones are handed over cannot overtake them, and the end
        // (from `finish` or from here) always comes after the last bytes.
        while true {
            let (batch, ended) = state.withLock { state -> ([[UInt8]], Bool?) in
                if state.waiting.isEmpty {
                    // After the end it gets the end from here, and is not kept (see `finish`).
                    if !state.finished { state.consumer = consumer }
                    return ([], state.finished ? state.broken : nil)
                }
                defer { state.waiting = [] }
                return (state.waiting, nil)
            }
            if batch.isEmpty {
                if let broken = ended { consumer(broken ? .broken : .end) }
                return
            }
            for bytes in batch { consumer(.data(bytes)) }
        }
    }

    /// The timed chunks to record for the answer whose whole body is `body`, with offsets from its first
    /// byte; nil to record the body whole (an answer of announced length, one that came at once, or one
    /// whose chunks do not add up to `body`).
    package func chunks(of body: [UInt8]) -> [ResponseChunk]? {
        let (events, pieces) = state.withLock { ($0.events, $0.pieces) }
        // A single piece is an answer that came at once: it is recorded whole.
        guard recording != .pieces || pieces.count > 1,
            let timed = cut(events: events, pieces: pieces, body: body),
            timed.reduce(0, { $0 + $1.bytes.count }) == body.count
        else { return nil }
        return Self.fromFirstByte(timed)
    }

    /// The timed chunks to record for an answer the upstream broke off, with offsets from the first byte:
    /// the events or lines that came (the last one as far as it came), or the pieces that came when they were
    /// kept (`keepsPiecesForBreak`); nil when nothing came, or for an answer recorded whole.
    package func brokenChunks() -> [ResponseChunk]? {
        let (events, pieces, body) = state.withLock { ($0.eventsSoFar, $0.pieces, $0.piecesBody) }
        guard let timed = cut(events: events, pieces: pieces, body: body), !timed.isEmpty else { return nil }
        return Self.fromFirstByte(timed)
    }

    /// The timed chunks to record for an answer its client abandoned, with offsets from the first byte: the
    /// events or lines that came (the last one as far as it came, which the client had too), the whole gRPC
    /// messages that came, or the pieces that came when they were kept (`keepsPiecesForBreak`); empty when
    /// nothing came yet; nil for an answer recorded whole (of announced length) or one whose pieces were not kept.
    package func abandonedChunks() -> [ResponseChunk]? {
        let (events, complete, pieces, body) = state.withLock { ($0.eventsSoFar, $0.events, $0.pieces, $0.piecesBody) }
        // A part of a gRPC message is no message: the recording keeps whole ones, as a gRPC client reads them.
        let units = recording == .messages ? complete : events
        if recording == .pieces, pieces.isEmpty, body != nil { return [] }
        guard let timed = cut(events: units, pieces: pieces, body: body) else { return nil }
        return Self.fromFirstByte(timed)
    }

    /// The chunks as `recording` cuts the answer: `events` for events and lines, `body` cut where each of
    /// `pieces` ends for pieces (nil when they do not end where it does); nil for an answer recorded whole.
    private func cut(events: [ResponseChunk], pieces: [(end: Int, offset: Double)], body: [UInt8]?)
        -> [ResponseChunk]?
    {
        switch recording {
        case .whole:
            return nil
        case .events, .lines, .messages:
            return events
        case .pieces:
            guard let body, pieces.last?.end == body.count else { return nil }
            var start = 0
            return pieces.map { piece in
                defer { start = piece.end }
                return ResponseChunk(offsetMilliseconds: piece.offset, bytes: Array(body[start..<piece.end]))
            }
        }
    }

    /// `chunks` with their offsets counted from the first one's.
    private static func fromFirstByte(_ chunks: [ResponseChunk]) -> [ResponseChunk] {
        guard let first = chunks.first?.offsetMilliseconds else { return chunks }
        return chunks.map { ResponseChunk(offsetMilliseconds: $0.offsetMilliseconds - first, bytes: $0.bytes) }
    }
}
