import KakapoHTTP

/// google.protobuf.Timestamp and Duration as proto3 JSON writes them: RFC 3339 in UTC
/// ("1972-01-01T10:00:20.021Z") and seconds with an "s" ("-3.500s"), with 0, 3, 6 or 9 fraction digits.
enum ProtoTime {
    /// 0001-01-01T00:00:00Z and 9999-12-31T23:59:59Z, the range the JSON mapping allows.
    static let minimumTimestamp: Int64 = -62_135_596_800
    static let maximumTimestamp: Int64 = 253_402_300_799
    /// About 10,000 years, the range of a Duration.
    static let maximumDuration: Int64 = 315_576_000_000

    static func timestamp(seconds: Int64, nanos: Int32) throws(ProtoError) -> String {
        guard seconds >= minimumTimestamp, seconds <= maximumTimestamp else {
            throw ProtoError("a Timestamp of \(seconds) seconds, outside years 1 to 9999")
        }
        guard nanos >= 0, nanos <= 999_999_999 else { throw ProtoError("a Timestamp with \(nanos) nanos") }
        let days = seconds >= 0 ? seconds / 86400 : (seconds - 86399) / 86400
        let secondOfDay = seconds - days * 86400
        let (year, month, day) = CivilDate.date(days: days)
        var text = pad(year, 4) + "-" + pad(month, 2) + "-" + pad(day, 2) + "T"
        text += pad(secondOfDay / 3600, 2) + ":" + pad(secondOfDay / 60 % 60, 2) + ":" + pad(secondOfDay % 60, 2)
        return text + fraction(nanos) + "Z"
    }

    static func duration(seconds: Int64, nanos: Int32) throws(ProtoError) -> String {
        guard seconds >= -maximumDuration, seconds <= maximumDuration else {
            throw ProtoError("a Duration of \(seconds) seconds, longer than 10,000 years")
        }
        guard nanos >= -999_999_999, nanos <= 999_999_999, seconds == 0 || nanos == 0 || (seconds < 0) == (nanos < 0)
        else { throw ProtoError("a Duration of \(seconds) seconds and \(nanos) nanos") }
        let negative = seconds < 0 || nanos < 0
        return (negative ? "-" : "") + String(seconds.magnitude) + fraction(Int32(nanos.magnitude)) + "s"
    }

    /// Seconds and nanos of an RFC 3339 time ("2023-11-14T22:13:20.123Z", "...+01:00").
    static func parseTimestamp(_ text: String) -> (seconds: Int64, nanos: Int32)? {
        let bytes = Array(text.utf8)
        guard bytes.count >= 20, bytes.count <= 40 else { return nil }
        var index = 0
        func number(_ digits: Int) -> Int64? {
            guard index + digits <= bytes.count else { return nil }
            var value: Int64 = 0
            for byte in bytes[index..<(index + digits)] {
                guard byte >= 0x30, byte <= 0x39 else { return nil }
                value = value * 10 + Int64(byte - 0x30)
            }
            index += digits
            return value
        }
        func expect(_ characters: String) -> Bool {
            guard index < bytes.count, characters.utf8.contains(bytes[index]) else { return false }
            index += 1
            return true
        }
        guard let year = number(4), expect("-"), let month = number(2), expect("-"), let day = number(2),
            expect("Tt"), let hour = number(2), expect(":"), let minute = number(2), expect(":"),
            let second = number(2), year >= 1, (1...12).contains(month), day >= 1,
            day <= CivilDate.daysIn(month: month, year: year), hour <= 23, minute <= 59, second <= 59
        else { return nil }
        var nanos: Int64 = 0
        if expect(".") {
            let start = index
            while index < bytes.count, bytes[index] >= 0x30, bytes[index] <= 0x39, index - start < 9 {
                nanos = nanos * 10 + Int64(bytes[index] - 0x30)
                index += 1
            }
            guard index > start else { return nil }
            for _ in 0..<(9 - (index - start)) { nanos *= 10 }
        }
        var offset: Int64 = 0
        if !expect("Zz") {
            guard index < bytes.count else { return nil }
            let sign: Int64 = bytes[index] == UInt8(ascii: "-") ? -1 : 1
            guard expect("+-"), let hours = number(2), expect(":"), let minutes = number(2), hours <= 23,
                minutes <= 59
            else { return nil }
            offset = sign * (hours * 3600 + minutes * 60)
        }
        guard index == bytes.count else { return nil }
        let seconds =
            CivilDate.days(year: year, month: month, day: day) * 86400 + hour * 3600 + minute * 60 + second - offset
        guard seconds >= minimumTimestamp, seconds <= maximumTimestamp else { return nil }
        return (seconds, Int32(nanos))
    }

    /// Seconds and nanos of "-3.5s".
    static func parseDuration(_ text: String) -> (seconds: Int64, nanos: Int32)? {
        var bytes = Array(text.utf8)
        guard bytes.last == UInt8(ascii: "s"), bytes.count <= 32 else { return nil }
        bytes.removeLast()
        let negative = bytes.first == UInt8(ascii: "-")
        if negative { bytes.removeFirst() }
        let parts = bytes.split(separator: UInt8(ascii: "."), maxSplits: 1, omittingEmptySubsequences: false)
        guard let whole = parts.first, !whole.isEmpty, whole.count <= 12,
            whole.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 })
        else { return nil }
        var seconds: Int64 = 0
        for byte in whole { seconds = seconds * 10 + Int64(byte - 0x30) }
        var nanos: Int64 = 0
        if parts.count == 2 {
            let fraction = parts[1]
            guard !fraction.isEmpty, fraction.count <= 9, fraction.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else {
                return nil
            }
            for byte in fraction { nanos = nanos * 10 + Int64(byte - 0x30) }
            for _ in 0..<(9 - fraction.count) { nanos *= 10 }
        }
        guard seconds <= maximumDuration else { return nil }
        return negative ? (-seconds, Int32(-nanos)) : (seconds, Int32(nanos))
    }

    private static func fraction(_ nanos: Int32) -> String {
        if nanos == 0 { return "" }
        if nanos % 1_000_000 == 0 { return "." + pad(Int64(nanos / 1_000_000), 3) }
        if nanos % 1000 == 0 { return "." + pad(Int64(nanos / 1000), 6) }
        return "." + pad(Int64(nanos), 9)
    }

    private static func pad(_ value: Int64, _ width: Int) -> String {
        let digits = String(value)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }
}
