import KakapoCassette

/// Plays a recorded stream's chunks, in order, each at its recorded offset from the start as `timing` says
/// (scaled by its speed, or back to back), through the timer a transport gives it: the one replay of
/// recorded chunks, shared by the NIO server (its event loop's timer) and Kakapo in process (a Dispatch
/// queue). A stream recorded broken off (`breaksOff`) ends with `.broken` instead of `.end`; one its client
/// abandoned when recorded (`holdsOpen`) with `.held`: nothing more comes, and the transport keeps it open.
package struct RecordedStreamPlayer: Sendable {
    /// What the player hands on.
    package enum Event: Sendable {
        case data([UInt8])
        case end
        /// The recording broke off here: the transport breaks the stream off the same way (no final chunk).
        case broken
        /// `isCancelled` said so: nothing more comes (the transport still ends what it started).
        case cancelled
        /// The recording's client left here (`holdsOpen`): nothing more comes, and the stream is not ended.
        case held
    }

    package let chunks: [ResponseChunk]
    package let timing: StreamTiming
    package let breaksOff: Bool
    package let holdsOpen: Bool

    package init(chunks: [ResponseChunk], timing: StreamTiming, breaksOff: Bool = false, holdsOpen: Bool = false) {
        self.chunks = chunks
        self.timing = timing
        self.breaksOff = breaksOff
        self.holdsOpen = holdsOpen
    }

    /// Starts playing: `after(nanoseconds, work)` runs `work` that many nanoseconds from now (0: as soon
    /// as it can, after what is already scheduled); each chunk schedules the next, so they go out in
    /// order whatever their offsets. Stops early once `isCancelled` says so, with `.cancelled`.
    package func play(
        after: @escaping @Sendable (Int64, @escaping @Sendable () -> Void) -> Void,
        isCancelled: @escaping @Sendable () -> Bool = { false },
        deliver: @escaping @Sendable (Event) -> Void
    ) {
        let start = ContinuousClock.now
        let chunks = self.chunks
        let timing = self.timing
        let breaksOff = self.breaksOff
        let holdsOpen = self.holdsOpen && !breaksOff
        @Sendable func send(_ index: Int) {
            guard !isCancelled() else {
                deliver(.cancelled)
                return
            }
            guard index < chunks.count else {
                // Held open: the client of the recording stopped reading here, and so the stream never ended.
                deliver(holdsOpen ? .held : breaksOff ? .broken : .end)
                return
            }
            deliver(.data(chunks[index].bytes))
            schedule(index + 1)
        }
        @Sendable func schedule(_ index: Int) {
            // The end comes right after the last chunk.
            guard index < chunks.count, let offset = timing.playbackMilliseconds(chunks[index].offsetMilliseconds)
            else {
                after(0) { send(index) }
                return
            }
            let due = ReplayDelay.nanoseconds(milliseconds: offset)
            let elapsed = ReplayDelay.nanoseconds(ContinuousClock.now - start)
            after(max(due - elapsed, 0)) { send(index) }
        }
        schedule(0)
    }
}
