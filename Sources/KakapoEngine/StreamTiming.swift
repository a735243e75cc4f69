/// How a recorded event stream is replayed (`--stream-timing`).
public enum StreamTiming: String, Sendable, CaseIterable {
    /// Each event after the gap it came after when it was recorded.
    case recorded
    /// Every event at once, back to back.
    case none
}
