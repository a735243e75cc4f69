#if canImport(Glibc)
    import Glibc
#else
    import Darwin
#endif

/// ISO 8601 timestamps in UTC with milliseconds (`2026-11-22T18:04:05.123Z`): a cassette's `recordedAt`
/// and a route's `{{now}}`.
public enum UTCTimestamp {
    /// The current time.
    public static func now() -> String {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        var seconds = now.tv_sec
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func pad(_ value: Int32, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        return pad(parts.tm_year + 1900, 4) + "-" + pad(parts.tm_mon + 1, 2) + "-" + pad(parts.tm_mday, 2) + "T"
            + pad(parts.tm_hour, 2) + ":" + pad(parts.tm_min, 2) + ":" + pad(parts.tm_sec, 2) + "."
            + pad(Int32(now.tv_nsec / 1_000_000), 3) + "Z"
    }
}
