/// The one conversion of Kakapo's waits (a route's latency, a recorded chunk's offset) into whole
/// nanoseconds for a timer, whatever transport sets it: never negative, never past a year, so a value from
/// a file or a request (negative, not a number, huge) can neither trap nor overflow a timer.
package enum ReplayDelay {
    /// The longest wait: a year.
    package static let longestNanoseconds: Int64 = 365 * 86_400 * 1_000_000_000

    /// `duration` in nanoseconds, between 0 and a year.
    package static func nanoseconds(_ duration: Duration) -> Int64 {
        guard duration > .zero else { return 0 }
        let (seconds, attoseconds) = min(duration, .seconds(365 * 86_400)).components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }

    /// `milliseconds` (a recorded offset) in nanoseconds, between 0 and a year; not a number is 0.
    package static func nanoseconds(milliseconds: Double) -> Int64 {
        guard milliseconds > 0 else { return 0 }
        return Int64(min(milliseconds * 1_000_000, Double(longestNanoseconds)))
    }
}
