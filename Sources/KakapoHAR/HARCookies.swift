import Foundation
import KakapoHTTP
import KakapoJSON

/// HAR 1.2 `cookies` arrays from `Cookie` and `Set-Cookie` headers: name and value for a request's,
/// and for a response's also `path`, `domain`, `expires` (ISO 8601), `httpOnly` and `secure` when the
/// header states them. Values are taken as written (a redacted cassette gives its placeholders).
enum HARCookies {
    /// The most cookies read from one message; a header holding more is cut there.
    static let maximumCount = 1_000

    /// `Cookie: a=1; b=2` as `[{"name": "a", "value": "1"}, ...]`.
    static func request(_ headers: HTTP.Headers) -> JSONValue {
        var cookies: [JSONValue] = []
        for header in headers.values(for: "Cookie") {
            for pair in header.split(separator: ";") where cookies.count < maximumCount {
                guard let (name, value) = nameAndValue(pair) else { continue }
                cookies.append(["name": .string(name), "value": .string(value)])
            }
        }
        return .array(cookies)
    }

    /// One entry per `Set-Cookie` header, with its attributes; `recordedAt` turns a `Max-Age` into `expires`.
    /// A header may repeat `Expires` many times: the last one that reads as a date counts (RFC 6265 5.2.1),
    /// so they are tried from the last, with formatters made once per message rather than per attribute.
    static func response(_ headers: HTTP.Headers, recordedAt: Date?) -> JSONValue {
        var cookies: [JSONValue] = []
        let dates = HTTPDates()
        for header in headers.values(for: "Set-Cookie").prefix(maximumCount) {
            var parts = header.split(separator: ";", omittingEmptySubsequences: false)[...]
            guard let first = parts.popFirst(), let (name, value) = nameAndValue(first) else { continue }
            var cookie: JSONObject = ["name": .string(name), "value": .string(value)]
            var maxAge: Int?
            var expires: [String] = []
            for attribute in parts {
                let (key, argument) = nameAndValue(attribute) ?? (String(attribute).trimmingSpaces(), "")
                switch key.lowercased() {
                case "path": cookie["path"] = .string(argument)
                case "domain": cookie["domain"] = .string(argument)
                case "expires":
                    expires.append(argument)
                    // Holds the member's place among the others until the dates are read.
                    if cookie["expires"] == nil { cookie["expires"] = .null }
                case "max-age": maxAge = Int(argument)
                case "httponly": cookie["httpOnly"] = true
                case "secure": cookie["secure"] = true
                default: break
                }
            }
            let date = expires.reversed().lazy.compactMap { dates.date($0) }.first
            cookie["expires"] = date.map { .string(dates.iso8601($0)) }
            // Max-Age wins over Expires (RFC 6265 5.3); one past about 30 years either way is ignored.
            if let maxAge, let recordedAt, (-1_000_000_000...1_000_000_000).contains(maxAge) {
                cookie["expires"] = .string(dates.iso8601(recordedAt.addingTimeInterval(TimeInterval(maxAge))))
            }
            cookies.append(.object(cookie))
        }
        return .array(cookies)
    }

    /// `name=value` with spaces trimmed; nil without a `=` or with an empty name.
    private static func nameAndValue(_ text: Substring) -> (String, String)? {
        guard let equals = text.firstIndex(of: "=") else { return nil }
        let name = String(text[..<equals]).trimmingSpaces()
        guard !name.isEmpty else { return nil }
        var value = String(text[text.index(after: equals)...]).trimmingSpaces()
        if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") {
            value = String(value.dropFirst().dropLast())
        }
        return (name, value)
    }

    /// Reads HTTP dates (`Wed, 21 Oct 2026 07:28:00 GMT`, also with dashes as older servers write it) and
    /// writes ISO 8601, each formatter made on first use.
    private final class HTTPDates {
        private lazy var readers: [DateFormatter] = [
            "EEE, dd MMM yyyy HH:mm:ss zzz", "EEE, dd-MMM-yyyy HH:mm:ss zzz", "EEEE, dd-MMM-yy HH:mm:ss zzz",
        ].map { format in
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "GMT")
            formatter.dateFormat = format
            return formatter
        }
        private lazy var writer: ISO8601DateFormatter = {
            let formatter = ISO8601DateFormatter()
            formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            return formatter
        }()

        func date(_ text: String) -> Date? { readers.lazy.compactMap { $0.date(from: text) }.first }

        func iso8601(_ date: Date) -> String { writer.string(from: date) }
    }
}
