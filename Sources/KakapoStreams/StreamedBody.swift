import Dispatch
import KakapoCassette
import Synchronization

/// The body of an answer that is still arriving, for callers without a socket (Kakapo in process): the
/// pieces of a live upstream stream as libcurl delivers them, or a recorded stream's chunks with their
/// recorded gaps scaled as `StreamTiming` says (back to back with `.none`), broken off after the last one
/// when the recording was.
///
/// Delivery runs on libcurl's and Dispatch's threads, never on Swift's cooperative pool, so a test
/// suite that keeps the pool busy does not hold a stream back. A live piece counts as delivered once
/// the handler returns, so a handler that is slow holds the upstream back as a slow socket client would.
public final class StreamedBody: Sendable {
    /// What the handler is given, in order: pieces, then `end`, or `broken` when the upstream broke off.
    public enum Event: Sendable {
        case data([UInt8])
        case end
        case broken
    }

    private enum Source: Sendable {
        case live(LiveResponse)
        case recorded(RecordedStreamPlayer)
    }

    private let source: Source
    private let cancelled = Atomic<Bool>(false)

    /// The body of `live` as it arrives.
    package init(live: LiveResponse) { source = .live(live) }

    /// Recorded chunks, each at its offset from the start of delivery as `timing` says; `breaksOff`: the
    /// stream breaks off after the last chunk instead of ending.
    package init(recorded chunks: [ResponseChunk], timing: StreamTiming, breaksOff: Bool = false) {
        source = .recorded(RecordedStreamPlayer(chunks: chunks, timing: timing, breaksOff: breaksOff))
    }

    /// Whether the body is a live upstream stream (else a recorded one, whose whole body the answer has).
    public var isLive: Bool {
        if case .live = source { return true }
        return false
    }

    /// Starts delivering to `handler` (once): each piece, then the end.
    public func deliver(to handler: @escaping @Sendable (Event) -> Void) {
        switch source {
        case .live(let live):
            live.attach { event in
                switch event {
                case .data(let bytes):
                    handler(.data(bytes))
                    live.delivered(bytes.count)
                case .end: handler(.end)
                case .broken: handler(.broken)
                }
            }
        case .recorded(let player):
            let queue = DispatchQueue(label: "kakapo.recorded-stream")
            player.play(
                after: { nanoseconds, work in
                    queue.asyncAfter(deadline: .now() + .nanoseconds(Int(nanoseconds)), execute: work)
                },
                isCancelled: { [self] in cancelled.load(ordering: .relaxed) },
                deliver: { event in
                    switch event {
                    case .data(let bytes): handler(.data(bytes))
                    case .end: handler(.end)
                    case .broken: handler(.broken)
                    // In process there is no connection to hold open: the body ends where the recording stops.
                    case .held: handler(.end)
                    // Given up by `cancel()`: whoever cancelled wants nothing more.
                    case .cancelled: break
                    }
                })
        }
    }

    /// Delivers the whole body to `completion` at its end; `broken` when the upstream broke off (the bytes
    /// are then what arrived).
    public func collect(_ completion: @escaping @Sendable (_ bytes: [UInt8], _ broken: Bool) -> Void) {
        let collected = Mutex<[UInt8]>([])
        deliver { event in
            switch event {
            case .data(let bytes): collected.withLock { $0 += bytes }
            case .end: completion(collected.withLock { $0 }, false)
            case .broken: completion(collected.withLock { $0 }, true)
            }
        }
    }

    /// Gives the body up: a live transfer stops, recorded chunks not yet delivered are dropped.
    public func cancel() {
        cancelled.store(true, ordering: .relaxed)
        if case .live(let live) = source { live.cancel() }
    }
}
