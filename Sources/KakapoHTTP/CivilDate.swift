/// Dates of the proleptic Gregorian calendar as days since 1970-01-01, both ways (Howard Hinnant's
/// `days_from_civil` and `civil_from_days`), for the time formats read and written by hand: HTTP dates,
/// ISO 8601 times, protobuf's JSON timestamps.
public enum CivilDate {
    /// Days since 1970-01-01 of `year`-`month`-`day` (month 1 to 12).
    public static func days(year: Int64, month: Int64, day: Int64) -> Int64 {
        let year = month <= 2 ? year - 1 : year
        let era = (year >= 0 ? year : year - 399) / 400
        let yearOfEra = year - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The year, month (1 to 12) and day of `days` since 1970-01-01.
    public static func date(days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    /// The days since 1970-01-01 and the second of that day of `seconds` since 1970 (before 1970 too).
    public static func split(seconds: Int64) -> (days: Int64, second: Int64) {
        var days = seconds / 86_400
        var second = seconds % 86_400
        if second < 0 {
            second += 86_400
            days -= 1
        }
        return (days, second)
    }

    /// How many days `month` (1 to 12) of `year` has.
    public static func daysIn(month: Int64, year: Int64) -> Int64 {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }
}
