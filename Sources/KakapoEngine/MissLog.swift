import Logging
import Synchronization

/// The log's miss lines at the default level, rate-limited so a flood of misses cannot flood the log: a
/// token bucket lets the first `burst` through in full, then one a `interval`; each line that follows some
/// held back comes after one saying how many (`… and 57 more misses not logged`). The summary lists every
/// miss whatever the log held back. Its memory is a few numbers.
final class MissLog: Sendable {
    /// The bucket itself, driven by the instants it is given (so a test needs no clock and no sleep).
    struct Bucket: Sendable {
        let burst: Int
        let interval: Duration
        private(set) var tokens: Int
        private var refilled: ContinuousClock.Instant?
        /// Misses not logged since the last line.
        private(set) var heldBack = 0

        init(burst: Int, interval: Duration) {
            self.burst = max(1, burst)
            self.interval = interval > .zero ? interval : .seconds(1)
            self.tokens = self.burst
        }

        /// Whether a miss at `now` is logged: nil when it is held back, else how many were held back before
        /// it (to be said first).
        mutating func admit(at now: ContinuousClock.Instant) -> Int? {
            if let refilled {
                let ratio = now < refilled ? 0 : (now - refilled) / interval
                if ratio >= Double(burst - tokens) {
                    tokens = burst
                    self.refilled = now
                } else if ratio >= 1 {
                    let earned = Int(ratio)
                    tokens += earned
                    self.refilled = refilled + interval * earned
                }
            } else {
                refilled = now
            }
            guard tokens > 0 else {
                if heldBack < Int.max { heldBack += 1 }
                return nil
            }
            tokens -= 1
            defer { heldBack = 0 }
            return heldBack
        }
    }

    /// The most miss lines logged at once before the limit starts.
    static let burst = 10
    /// How often a miss line is logged while the limit holds.
    static let interval = Duration.seconds(1)

    private let bucket: Mutex<Bucket>

    init(burst: Int = MissLog.burst, interval: Duration = MissLog.interval) {
        bucket = Mutex(Bucket(burst: burst, interval: interval))
    }

    /// Logs `miss: LINE` at info level unless the limit holds it back (after saying how many it held back
    /// since the last line).
    func log(_ line: String, to logger: Logger, at now: ContinuousClock.Instant = .now) {
        guard logger.logLevel <= .info, let heldBack = bucket.withLock({ $0.admit(at: now) }) else { return }
        if heldBack > 0 {
            logger.info(
                "… and \(heldBack) more misses not logged (at most one a second after the first \(Self.burst); the summary lists them)"
            )
        }
        logger.info("miss: \(line)")
    }
}
