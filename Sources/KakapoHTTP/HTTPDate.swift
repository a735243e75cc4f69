/// HTTP dates (RFC 9110 section 5.6.7) as seconds since 1970, read and written without Foundation's
/// formatters (a replay rewrites them on every answer): IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`),
/// which is what is written, and on reading also RFC 850 (`Sunday, 06-Nov-94 08:49:37 GMT`), asctime
/// (`Sun Nov  6 08:49:37 1994`) and the cookie form with dashes and a four-digit year
/// (`Sun, 06-Nov-1994 08:49:37 GMT`).
public enum HTTPDate {
    /// The earliest and latest seconds read or written: years 1601 to 9999, so arithmetic on them never
    /// overflows and every one writes as four digits.
    public static let earliest: Int64 = -11_644_473_600
    public static let latest: Int64 = 253_402_300_799

    /// The months' names in lower case, as three bytes packed in an integer each.
    private static let months: [UInt32] = [
        "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
    ]
    .map { name in name.utf8.reduce(0) { $0 << 8 | UInt32($1) } }
    private static let monthNames: [StaticString] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ]
    private static let dayNames: [StaticString] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"]

    /// The seconds `text` names, or nil when it is none of the forms (or out of `earliest...latest`).
    public static func parse(_ text: some StringProtocol) -> Int64? {
        guard text.utf8.count <= 64 else { return nil }
        // Words and numbers, in order, whatever separates them (`, `, `-`, spaces, `:`).
        let bytes = Array(text.utf8)
        var words: [ArraySlice<UInt8>] = []
        var start: Int?
        for index in 0...bytes.count {
            let separator: Bool
            if index == bytes.count {
                separator = true
            } else {
                switch bytes[index] {
                case 0x20, 0x2C, 0x2D, 0x3A, 0x09: separator = true
                default: separator = false
                }
            }
            if separator {
                if let begun = start {
                    words.append(bytes[begun..<index])
                    start = nil
                }
            } else if start == nil {
                start = index
            }
        }
        // IMF-fixdate, RFC 850, cookie: day-name day month year hh mm ss GMT.
        // asctime: day-name month day hh mm ss year.
        guard words.count >= 7 else { return nil }
        var day: Int64
        var month: Int
        var year: Int64
        var time: (Int64, Int64, Int64)
        if let first = number(words[1]) {
            day = first
            guard let found = monthNumber(words[2]), let y = number(words[3]),
                let h = number(words[4]), let m = number(words[5]), let s = number(words[6])
            else { return nil }
            month = found
            year = y
            time = (h, m, s)
            if words.count > 7 {
                guard words.count == 8, zoneIsUTC(words[7]) else { return nil }
            }
            if words[3].count == 2 {
                // RFC 850's two-digit year: the one within 50 years (RFC 9110 says recipients pick so).
                year += year < 70 ? 2000 : 1900
            } else if words[3].count != 4 {
                return nil
            }
        } else {
            guard words.count == 7, let found = monthNumber(words[1]), let d = number(words[2]),
                let h = number(words[3]), let m = number(words[4]), let s = number(words[5]),
                let y = number(words[6]), words[6].count == 4
            else { return nil }
            month = found
            day = d
            year = y
            time = (h, m, s)
        }
        guard (1601...9999).contains(year), (1...CivilDate.daysIn(month: Int64(month + 1), year: year)).contains(day),
            (0...23).contains(time.0),
            (0...59).contains(time.1), (0...60).contains(time.2)
        else { return nil }
        let seconds =
            CivilDate.days(year: year, month: Int64(month + 1), day: day) * 86_400 + time.0 * 3_600 + time.1 * 60
            + time.2
        return (earliest...latest).contains(seconds) ? seconds : nil
    }

    /// `seconds` as IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), clamped to `earliest...latest`.
    public static func format(_ seconds: Int64) -> String {
        let (days, rest) = CivilDate.split(seconds: min(max(seconds, earliest), latest))
        let (year, month, day) = CivilDate.date(days: days)
        let weekday = Int(((days % 7) + 7) % 7)
        return String(unsafeUninitializedCapacity: 29) { buffer in
            var index = 0
            func put(_ byte: UInt8) {
                buffer[index] = byte
                index += 1
            }
            func put(_ name: StaticString) {
                name.withUTF8Buffer { for byte in $0 { put(byte) } }
            }
            func digits(_ value: Int64, _ count: Int) {
                var divisor: Int64 = 1
                for _ in 1..<count { divisor *= 10 }
                while divisor > 0 {
                    put(UInt8(truncatingIfNeeded: 0x30 + value / divisor % 10))
                    divisor /= 10
                }
            }
            put(dayNames[weekday])
            put(", ")
            digits(day, 2)
            put(0x20)
            put(monthNames[Int(month) - 1])
            put(0x20)
            digits(year, 4)
            put(0x20)
            digits(rest / 3_600, 2)
            put(0x3A)
            digits(rest / 60 % 60, 2)
            put(0x3A)
            digits(rest % 60, 2)
            put(" GMT")
            return index
        }
    }

    private static func number(_ word: ArraySlice<UInt8>) -> Int64? {
        guard !word.isEmpty, word.count <= 4 else { return nil }
        var value: Int64 = 0
        for byte in word {
            guard (0x30...0x39).contains(byte) else { return nil }
            value = value * 10 + Int64(byte - 0x30)
        }
        return value
    }

    private static func monthNumber(_ word: ArraySlice<UInt8>) -> Int? {
        guard word.count == 3 else { return nil }
        let packed = word.reduce(UInt32(0)) { $0 << 8 | UInt32($1 | 0x20) }
        return months.firstIndex(of: packed)
    }

    private static func zoneIsUTC(_ word: ArraySlice<UInt8>) -> Bool {
        let lowered = word.map { $0 | 0x20 }
        return lowered.elementsEqual("gmt".utf8) || lowered.elementsEqual("utc".utf8)
    }
}
