#if canImport(Glibc)
    import Glibc
#else
    import Darwin
#endif

/// The time of day replays and templates use: the system clock, moved by a fixed offset when the
/// `KAKAPO_NOW` environment variable (an ISO 8601 time, for tests only) names the time the clock reads when
/// first asked; from there it runs on with the system clock.
public enum WallClock {
    /// Seconds and nanoseconds since 1970.
    public static func now() -> (seconds: Int64, nanoseconds: Int64) {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        var seconds = Int64(now.tv_sec)
        var nanoseconds = Int64(now.tv_nsec) + offset.nanoseconds
        seconds += offset.seconds + nanoseconds / 1_000_000_000
        nanoseconds %= 1_000_000_000
        if nanoseconds < 0 {
            nanoseconds += 1_000_000_000
            seconds -= 1
        }
        return (seconds, nanoseconds)
    }

    /// Whole seconds since 1970.
    public static var seconds: Int64 { now().seconds }

    /// How far `KAKAPO_NOW` moves the clock; zero without it (or when it is not an ISO 8601 time).
    private static let offset: (seconds: Int64, nanoseconds: Int64) = {
        guard let pointer = getenv("KAKAPO_NOW"), let wanted = ISOTime.parse(String(cString: pointer)) else {
            return (0, 0)
        }
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        // Seconds and nanoseconds apart: a time centuries away would overflow in nanoseconds.
        return (wanted.seconds - Int64(now.tv_sec), wanted.nanoseconds - Int64(now.tv_nsec))
    }()
}
