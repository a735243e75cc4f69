import KakapoEngine

/// Recorded answers' heads prepared for the wire on first use and kept by position in the server's cassette
/// (`Answer.replay`), for the second their times were moved to (`Answer.replaySecond`).
typealias PreparedReplies = ReplayCache<PreparedResponse>
