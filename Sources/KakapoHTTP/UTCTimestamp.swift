/// ISO 8601 timestamps in UTC with milliseconds (`2026-11-22T18:04:05.123Z`): a cassette's `recordedAt`
/// and a route's `{{now}}`.
public enum UTCTimestamp {
    /// The current time (`WallClock`).
    public static func now() -> String {
        let now = WallClock.now()
        var time = ISOTime(seconds: now.seconds, nanoseconds: now.nanoseconds)
        time.fractionDigits = 3
        return time.text
    }
}
