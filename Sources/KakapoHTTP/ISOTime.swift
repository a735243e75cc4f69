/// ISO 8601 times as JSON APIs write them (`2026-11-22T18:04:05Z`, `2026-11-22T18:04:05.123+01:00`,
/// `2026-11-22 18:04`), read into seconds since 1970 and written back in the layout they were read in, so
/// a time moved by a replay looks as the upstream wrote it.
public struct ISOTime: Sendable, Hashable {
    /// Seconds since 1970 (UTC).
    public var seconds: Int64
    public var nanoseconds: Int64
    /// How it was written: `T` or a space between date and time, whether it had seconds, how many digits
    /// of fraction, and its zone (`Z`, an offset in minutes with or without a colon, or none: read as UTC).
    public var separator: UInt8 = UInt8(ascii: "T")
    public var hasSeconds = true
    public var fractionDigits = 0
    public var zone: Zone = .z

    public enum Zone: Sendable, Hashable {
        case z
        case offset(minutes: Int64, colon: Bool)
        case none
    }

    public init(seconds: Int64, nanoseconds: Int64 = 0) {
        self.seconds = seconds
        self.nanoseconds = nanoseconds
    }

    /// The time `text` names, or nil when it is not a date with a time (years 1601 to 9999).
    public static func parse(_ text: some StringProtocol) -> ISOTime? {
        let bytes = Array(text.utf8)
        guard bytes.count >= 16, bytes.count <= 40 else { return nil }
        var index = 0
        func digits(_ count: Int) -> Int64? {
            guard index + count <= bytes.count else { return nil }
            var value: Int64 = 0
            for byte in bytes[index..<index + count] {
                guard (0x30...0x39).contains(byte) else { return nil }
                value = value * 10 + Int64(byte - 0x30)
            }
            index += count
            return value
        }
        func expect(_ byte: UInt8) -> Bool {
            guard index < bytes.count, bytes[index] == byte else { return false }
            index += 1
            return true
        }
        guard let year = digits(4), expect(0x2D), let month = digits(2), expect(0x2D), let day = digits(2),
            index < bytes.count, bytes[index] == 0x54 || bytes[index] == 0x20 || bytes[index] == 0x74
        else { return nil }
        var time = ISOTime(seconds: 0)
        time.separator = bytes[index]
        index += 1
        guard let hour = digits(2), expect(0x3A), let minute = digits(2) else { return nil }
        var second: Int64 = 0
        time.hasSeconds = false
        if expect(0x3A) {
            guard let value = digits(2) else { return nil }
            second = value
            time.hasSeconds = true
            if index < bytes.count, bytes[index] == 0x2E || bytes[index] == 0x2C {
                index += 1
                var count = 0
                var fraction: Int64 = 0
                while index < bytes.count, (0x30...0x39).contains(bytes[index]) {
                    if count < 9 { fraction = fraction * 10 + Int64(bytes[index] - 0x30) }
                    count += 1
                    index += 1
                }
                guard count > 0 else { return nil }
                time.fractionDigits = count
                for _ in min(count, 9)..<9 { fraction *= 10 }
                time.nanoseconds = fraction
            }
        }
        var offset: Int64 = 0
        if index == bytes.count {
            time.zone = .none
        } else if bytes[index] == 0x5A || bytes[index] == 0x7A {
            index += 1
            time.zone = .z
        } else if bytes[index] == 0x2B || bytes[index] == 0x2D {
            let sign: Int64 = bytes[index] == 0x2D ? -1 : 1
            index += 1
            guard let hours = digits(2) else { return nil }
            let colon = expect(0x3A)
            guard let minutes = digits(2), hours <= 23, minutes <= 59 else { return nil }
            offset = sign * (hours * 60 + minutes)
            time.zone = .offset(minutes: offset, colon: colon)
        }
        guard index == bytes.count, (1601...9999).contains(year), (1...12).contains(month),
            (1...CivilDate.daysIn(month: max(1, min(month, 12)), year: year)).contains(day),
            hour <= 23, minute <= 59, second <= 60
        else { return nil }
        time.seconds =
            CivilDate.days(year: year, month: month, day: day) * 86_400 + hour * 3_600 + minute * 60 + second - offset
            * 60
        return time
    }

    /// This time written in the layout it was read in (a new one: `2026-11-22T18:04:05Z`); clamped to the
    /// years 1601 to 9999.
    public var text: String {
        var offsetMinutes: Int64 = 0
        if case .offset(let minutes, _) = zone { offsetMinutes = minutes }
        let (days, rest) = CivilDate.split(
            seconds: min(max(seconds + offsetMinutes * 60, HTTPDate.earliest), HTTPDate.latest))
        let (year, month, day) = CivilDate.date(days: days)
        func pad(_ value: Int64, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        var text = pad(year, 4) + "-" + pad(month, 2) + "-" + pad(day, 2)
        text += String(UnicodeScalar(separator)) + pad(rest / 3_600, 2) + ":" + pad(rest / 60 % 60, 2)
        if hasSeconds {
            text += ":" + pad(rest % 60, 2)
            if fractionDigits > 0 {
                var fraction = nanoseconds
                for _ in min(fractionDigits, 9)..<9 { fraction /= 10 }
                text += "." + pad(fraction, min(fractionDigits, 9))
                if fractionDigits > 9 { text += String(repeating: "0", count: fractionDigits - 9) }
            }
        }
        switch zone {
        case .z: text += "Z"
        case .none: break
        case .offset(let minutes, let colon):
            text +=
                (minutes < 0 ? "-" : "+") + pad(abs(minutes) / 60, 2) + (colon ? ":" : "") + pad(abs(minutes) % 60, 2)
        }
        return text
    }

    /// This time moved by `seconds` (clamped to the years 1601 to 9999), in the same layout.
    public func moved(by delta: Int64) -> ISOTime {
        var moved = self
        moved.seconds = min(max(seconds &+ delta, HTTPDate.earliest), HTTPDate.latest)
        return moved
    }
}
