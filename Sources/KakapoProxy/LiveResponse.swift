import KakapoCassette
import Synchronization

/// A streamed upstream answer on its way through: libcurl's thread appends body bytes as they arrive,
/// the connection's event loop takes them as soon as it is attached (bytes that come earlier wait here),
/// and the recording gets one chunk per server-sent event with its time offset.
final class LiveResponse: Sendable {
    enum Event: Sendable {
        case data([UInt8])
        case end
        /// The upstream broke off: the client's connection is closed without a final chunk, so it can
        /// tell the stream is incomplete.
        case broken
    }

    private struct State {
        var waiting: [[UInt8]] = []
        var finished = false
        var broken = false
        var consumer: (@Sendable (Event) -> Void)?
        var chunks: [ResponseChunk] = []
        var pending: [UInt8] = []
        var pendingOffset: Double?
    }

    private let state = Mutex(State())
    private let started = ContinuousClock.now

    /// Body bytes from the upstream (libcurl's thread).
    func append(_ bytes: [UInt8]) {
        let offset = (ContinuousClock.now - started) / .milliseconds(1)
        let consumer = state.withLock { state -> (@Sendable (Event) -> Void)? in
            if state.pendingOffset == nil { state.pendingOffset = offset }
            state.pending += bytes
            for event in ResponseChunk.takeEvents(from: &state.pending) {
                state.chunks.append(ResponseChunk(offsetMilliseconds: state.pendingOffset ?? offset, bytes: event))
                state.pendingOffset = state.pending.isEmpty ? nil : offset
            }
            if state.consumer == nil { state.waiting.append(bytes) }
            return state.consumer
        }
        consumer?(.data(bytes))
    }

    /// The upstream is done (`broken` when it failed): the consumer gets the end, and the recording its
    /// last chunk.
    func finish(broken: Bool = false) {
        let consumer = state.withLock { state -> (@Sendable (Event) -> Void)? in
            state.finished = true
            state.broken = broken
            if !state.pending.isEmpty {
                state.chunks.append(ResponseChunk(offsetMilliseconds: state.pendingOffset ?? 0, bytes: state.pending))
                state.pending = []
            }
            return state.consumer
        }
        consumer?(broken ? .broken : .end)
    }

    /// Starts delivering to `consumer`: what arrived so far at once, the rest as it comes.
    func attach(_ consumer: @escaping @Sendable (Event) -> Void) {
        let (waiting, finished, broken) = state.withLock { state in
            state.consumer = consumer
            defer { state.waiting = [] }
            return (state.waiting, state.finished, state.broken)
        }
        for bytes in waiting { consumer(.data(bytes)) }
        if finished { consumer(broken ? .broken : .end) }
    }

    /// The events recorded so far, with offsets from the first byte of the body.
    var chunks: [ResponseChunk] {
        state.withLock { state in
            guard let first = state.chunks.first?.offsetMilliseconds else { return state.chunks }
            return state.chunks.map {
                ResponseChunk(offsetMilliseconds: $0.offsetMilliseconds - first, bytes: $0.bytes)
            }
        }
    }

    /// Waits for the end and returns the whole body (callers without a socket).
    func collect() async -> [UInt8] {
        await withCheckedContinuation { continuation in
            let body = Mutex<[UInt8]>([])
            attach { event in
                switch event {
                case .data(let bytes): body.withLock { $0 += bytes }
                case .end, .broken: continuation.resume(returning: body.withLock { $0 })
                }
            }
        }
    }
}
