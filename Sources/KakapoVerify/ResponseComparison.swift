import Foundation
import KakapoCassette
import KakapoHTTP
import KakapoJSON

/// Compares a recorded answer with a live one: the status, end-to-end headers other than volatile ones,
/// and the body (JSON by pointer, with volatile values left out: timestamps, UUIDs, request ids, and
/// pointers the user names; anything else byte for byte, after undoing compression). A value the
/// recording holds redacted (a header or JSON string with `[REDACTED]` in it) is not compared.
public struct ResponseComparison: Sendable {
    /// Header names whose values change from call to call.
    public static let volatileHeaders: Set<String> = [
        "date", "expires", "age", "last-modified", "etag", "set-cookie", "content-length", "server-timing",
        "x-request-id", "x-correlation-id", "x-amzn-requestid", "x-amz-request-id", "x-runtime", "cf-ray", "via",
        "x-cache", "x-cache-hits", "x-served-by", "x-timer", "report-to", "nel", "connection", "keep-alive",
        "transfer-encoding", "x-ratelimit-remaining", "x-ratelimit-reset", "ratelimit-remaining", "ratelimit-reset",
        "traceparent", "x-trace-id", "x-b3-traceid",
    ]

    /// JSON member names whose values change from call to call.
    static let volatileKeys: Set<String> = [
        "requestid", "request_id", "traceid", "trace_id", "correlationid", "correlation_id", "nonce", "etag",
        "timestamp", "servertime", "server_time",
    ]

    /// Pointers left out of body comparison (and everything under them).
    public var ignoredPointers: [JSONPointer]

    public init(ignoredPointers: [JSONPointer] = []) { self.ignoredPointers = ignoredPointers }

    /// What differs, one line each; empty when the answers agree.
    public func differences(recorded: HTTP.Response, live: HTTP.Response) -> [String] {
        var found: [String] = []
        if recorded.status != live.status { found.append("status: \(recorded.status) recorded, \(live.status) now") }
        found += headerDifferences(recorded.headers, live.headers)
        found += bodyDifferences(Self.plainBody(recorded), Self.plainBody(live))
        return found
    }

    private func headerDifferences(_ recorded: HTTP.Headers, _ live: HTTP.Headers) -> [String] {
        func relevant(_ headers: HTTP.Headers) -> [String: [String]] {
            var result: [String: [String]] = [:]
            for field in HopByHopHeaders.removing(from: headers) {
                let name = field.name.lowercased()
                if Self.volatileHeaders.contains(name) || name == "content-encoding" { continue }
                result[name, default: []].append(field.value)
            }
            return result
        }
        let before = relevant(recorded)
        let after = relevant(live)
        var found: [String] = []
        for name in Set(before.keys).union(after.keys).sorted() {
            let was = before[name]
            let now = after[name]
            if was == now || was?.contains(Redactor.placeholder) == true { continue }
            switch (was, now) {
            case (nil, let now?): found.append("header \(name): new, \(now.joined(separator: ", "))")
            case (let was?, nil): found.append("header \(name): gone, was \(was.joined(separator: ", "))")
            case (let was?, let now?):
                found.append(
                    "header \(name): \(was.joined(separator: ", ")) recorded, \(now.joined(separator: ", ")) now")
            default: break
            }
        }
        return found
    }

    private func bodyDifferences(_ recorded: [UInt8], _ live: [UInt8]) -> [String] {
        if recorded == live { return [] }
        guard JSONParser.looksLikeContainer(recorded) || JSONParser.looksLikeContainer(live),
            let was = try? JSONParser.parse(recorded), let now = try? JSONParser.parse(live)
        else {
            return ["body: \(recorded.count) bytes recorded, \(live.count) bytes now, not the same"]
        }
        var found: [String] = []
        for pointer in was.differences(from: now, limit: 1_000) {
            if ignoredPointers.contains(where: { pointer.components.starts(with: $0.components) }) { continue }
            let before = was[pointer: pointer]
            let after = now[pointer: pointer]
            if Self.isVolatile(pointer, before, after) || Self.isRedacted(before) { continue }
            found.append("body \(pointer): \(Self.describe(before)) recorded, \(Self.describe(after)) now")
            if found.count == 20 {
                found.append("body: ... and more")
                break
            }
        }
        return found
    }

    /// True for values that change from call to call: both timestamps, both UUIDs, or a member whose name
    /// says so (`requestId`, `timestamp`, `...At`, `..._at`).
    static func isVolatile(_ pointer: JSONPointer, _ before: JSONValue?, _ after: JSONValue?) -> Bool {
        if let name = pointer.components.last?.lowercased() {
            if volatileKeys.contains(name) { return true }
            if let before, let after, before.kindDescription == after.kindDescription,
                name.hasSuffix("_at") || (name.count > 2 && pointer.components.last!.hasSuffix("At"))
            {
                return true
            }
        }
        guard case .string(let a)? = before, case .string(let b)? = after else { return false }
        return (isTimestamp(a) && isTimestamp(b)) || (isUUID(a) && isUUID(b))
    }

    /// True for a recorded value that redaction replaced (wholly, or a secret inside it).
    static func isRedacted(_ value: JSONValue?) -> Bool {
        guard case .string(let text)? = value else { return false }
        return text.contains(Redactor.placeholder)
    }

    static func isTimestamp(_ text: String) -> Bool {
        text.range(of: #"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}"#, options: .regularExpression) != nil
            || text.range(of: #"^[A-Z][a-z]{2}, \d{1,2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}"#, options: .regularExpression)
                != nil
    }

    static func isUUID(_ text: String) -> Bool {
        text.range(
            of: #"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$"#,
            options: .regularExpression) != nil
    }

    static func describe(_ value: JSONValue?) -> String {
        guard let value else { return "nothing" }
        let text = String(decoding: JSONWriter().write(value), as: UTF8.self)
        return text.count > 80 ? String(text.prefix(77)) + "..." : text
    }

    static func plainBody(_ response: HTTP.Response) -> [UInt8] {
        ContentCoding.decoding(response.body, headers: response.headers).content
    }
}
