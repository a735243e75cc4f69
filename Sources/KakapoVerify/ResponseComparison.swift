import Foundation
import KakapoCassette
import KakapoHTTP
import KakapoJSON

/// Compares a recorded answer with a live one and says how much each difference matters (`Verdict`):
/// nothing at the places the interaction marks volatile, at the headers that change on every call (`Date`,
/// request ids) or at the pointers the user leaves out; `benign` for values that look volatile but are not
/// marked (UUIDs, times, nonces, `requestId`, `...At`), other values of the same type, added members and
/// headers, another number of elements and another header order; `changed` for another status or media
/// type, a member removed, a type changed, an enum-like value new, a non-JSON body that differs. A value
/// the recording holds redacted (`[REDACTED]` in it) is not compared.
public struct ResponseComparison: Sendable {
    /// How much a difference, or a recording's differences together, matter.
    public enum Verdict: String, Sendable, Comparable, CaseIterable {
        /// Nothing changed but values marked (or known) to change on every call.
        case same
        /// Changes a client should survive.
        case benign
        /// Changes a client may break on.
        case changed

        public static func < (lhs: Verdict, rhs: Verdict) -> Bool {
            allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
        }
    }

    /// One difference: how much it matters, where (nil for the status and header order), and in words.
    public struct Difference: Sendable, Hashable {
        public let verdict: Verdict
        public let place: VolatileFields.Place?
        public let text: String
    }

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

    /// The most differences reported for one answer (the rest are summed up in one line).
    static let reportedLimit = 20

    public init(ignoredPointers: [JSONPointer] = []) { self.ignoredPointers = ignoredPointers }

    /// What differs, one line each; empty when the answers agree but for volatile values.
    public func differences(recorded: HTTP.Response, live: HTTP.Response) -> [String] {
        classified(recorded: recorded, live: live).map(\.text)
    }

    /// The differences between `recorded` and `live` that matter at all (`benign` or `changed`), in order:
    /// status, headers, body. `volatile` is the interaction's.
    public func classified(
        recorded: HTTP.Response, live: HTTP.Response, volatile: VolatileFields = VolatileFields()
    ) -> [Difference] {
        var found: [Difference] = []
        if recorded.status != live.status {
            found.append(
                Difference(
                    verdict: .changed, place: nil, text: "status: \(recorded.status) recorded, \(live.status) now"))
        }
        found += headerDifferences(recorded.headers, live.headers, volatile: volatile)
        found += bodyDifferences(Self.plainBody(recorded), Self.plainBody(live), volatile: volatile)
        return found
    }

    /// Every place where the two answers' headers or JSON bodies differ, whatever it matters: what
    /// `learn-volatile` marks (hop-by-hop headers and `Content-Length` left out).
    public static func differingPlaces(_ first: HTTP.Response, _ second: HTTP.Response) -> [VolatileFields.Place] {
        var places: [VolatileFields.Place] = []
        let a = headerValues(first.headers)
        let b = headerValues(second.headers)
        for name in Set(a.keys).intersection(b.keys).sorted() where a[name] != b[name] && name != "content-length" {
            places.append(.header(name))
        }
        let one = plainBody(first)
        let other = plainBody(second)
        if one != other, JSONParser.looksLikeContainer(one), let x = try? JSONParser.parse(one),
            let y = try? JSONParser.parse(other)
        {
            var visited = 0
            collectLeaves(x, y, at: [], into: &places, visited: &visited)
        }
        return places
    }

    private static func collectLeaves(
        _ a: JSONValue, _ b: JSONValue, at path: [String], into places: inout [VolatileFields.Place],
        visited: inout Int
    ) {
        visited += 1
        guard visited <= 100_000, places.count < VolatileFields.limit else { return }
        switch (a, b) {
        case (.object(let x), .object(let y)):
            for (key, value) in x {
                if let other = y[key] {
                    collectLeaves(value, other, at: path + [key], into: &places, visited: &visited)
                }
            }
        case (.array(let x), .array(let y)) where x.count == y.count:
            for index in x.indices {
                collectLeaves(x[index], y[index], at: path + [String(index)], into: &places, visited: &visited)
            }
        default:
            if !a.isEquivalent(to: b), !path.isEmpty { places.append(.body(JSONPointer(components: path))) }
        }
    }

    /// End-to-end headers by lowercased name, values in order.
    private static func headerValues(_ headers: HTTP.Headers) -> [String: [String]] {
        var result: [String: [String]] = [:]
        for field in HopByHopHeaders.removing(from: headers) {
            result[field.name.lowercased(), default: []].append(field.value)
        }
        return result
    }

    private func headerDifferences(_ recorded: HTTP.Headers, _ live: HTTP.Headers, volatile: VolatileFields)
        -> [Difference]
    {
        func relevant(_ name: String) -> Bool {
            !Self.volatileHeaders.contains(name) && name != "content-encoding" && !volatile.responseHeader(name)
        }
        let before = Self.headerValues(recorded).filter { relevant($0.key) }
        let after = Self.headerValues(live).filter { relevant($0.key) }
        var found: [Difference] = []
        for name in Set(before.keys).union(after.keys).sorted() {
            let was = before[name]
            let now = after[name]
            if was == now || was?.contains(where: { $0.contains(Redactor.placeholder) }) == true { continue }
            let verdict: Verdict =
                name == "content-type" && Self.mediaType(was) != Self.mediaType(now) ? .changed : .benign
            let text: String
            switch (was, now) {
            case (nil, let now?): text = "header \(name): new, \(now.joined(separator: ", "))"
            case (let was?, nil): text = "header \(name): gone, was \(was.joined(separator: ", "))"
            case (let was?, let now?):
                text = "header \(name): \(was.joined(separator: ", ")) recorded, \(now.joined(separator: ", ")) now"
            default: continue
            }
            found.append(Difference(verdict: verdict, place: .header(name), text: text))
        }
        if found.isEmpty {
            // The same fields in another order.
            func order(_ headers: HTTP.Headers) -> [String] {
                var seen: Set<String> = []
                return HopByHopHeaders.removing(from: headers).map { $0.name.lowercased() }.filter {
                    relevant($0) && seen.insert($0).inserted
                }
            }
            if order(recorded) != order(live) {
                found.append(
                    Difference(verdict: .benign, place: nil, text: "headers: the same fields in another order"))
            }
        }
        return found
    }

    /// The media type of a `Content-Type`, lowercased, without parameters.
    private static func mediaType(_ values: [String]?) -> String? {
        values?.first.map {
            String($0.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false)[0]).trimmingSpaces()
                .lowercased()
        }
    }

    private func bodyDifferences(_ recorded: [UInt8], _ live: [UInt8], volatile: VolatileFields) -> [Difference] {
        if recorded == live { return [] }
        guard JSONParser.looksLikeContainer(recorded) || JSONParser.looksLikeContainer(live),
            let was = try? JSONParser.parse(recorded), let now = try? JSONParser.parse(live)
        else {
            return [
                Difference(
                    verdict: .changed, place: nil,
                    text: "body: \(recorded.count) bytes recorded, \(live.count) bytes now, not the same")
            ]
        }
        var walk = BodyWalk(comparison: self, volatile: volatile)
        walk.compare(was, now, at: [])
        if walk.skipped > 0 {
            walk.found.append(
                Difference(
                    verdict: walk.skippedVerdict, place: nil, text: "body: ... and \(walk.skipped) more difference(s)"))
        }
        return walk.found
    }

    /// Compares two JSON bodies member by member.
    private struct BodyWalk {
        let comparison: ResponseComparison
        let volatile: VolatileFields
        var found: [Difference] = []
        var skipped = 0
        var skippedVerdict = Verdict.benign
        var visited = 0

        init(comparison: ResponseComparison, volatile: VolatileFields) {
            self.comparison = comparison
            self.volatile = volatile
        }

        mutating func compare(_ was: JSONValue, _ now: JSONValue, at path: [String]) {
            visited += 1
            guard visited <= 100_000 else { return }
            if comparison.ignoredPointers.contains(where: { path.starts(with: $0.components) }) { return }
            if !path.isEmpty, volatile.responseBody(path) { return }
            switch (was, now) {
            case (.object(let before), .object(let after)):
                for (key, value) in before {
                    if let other = after[key] {
                        compare(value, other, at: path + [key])
                    } else if !ignored(path + [key]) {
                        note(.changed, path + [key], "removed (was \(ResponseComparison.describe(value)))")
                    }
                }
                for (key, value) in after where before[key] == nil && !ignored(path + [key]) {
                    note(.benign, path + [key], "added (\(ResponseComparison.describe(value)))")
                }
            case (.array(let before), .array(let after)):
                for index in 0..<min(before.count, after.count) {
                    compare(before[index], after[index], at: path + [String(index)])
                }
                if before.count != after.count {
                    note(.benign, path, "\(before.count) elements recorded, \(after.count) now")
                }
            default:
                if was.isEquivalent(to: now) || ResponseComparison.isRedacted(was) { return }
                let pointer = JSONPointer(components: path)
                if was.kindDescription != now.kindDescription {
                    // A member that comes and goes as null is optional; any other change of type breaks clients.
                    let verdict: Verdict = was == .null || now == .null ? .benign : .changed
                    note(
                        verdict, path,
                        "\(was.kindDescription) recorded, \(now.kindDescription) now (\(ResponseComparison.describe(was)) recorded, \(ResponseComparison.describe(now)) now)"
                    )
                } else if ResponseComparison.isVolatile(pointer, was, now) {
                    note(
                        .benign, path,
                        "\(ResponseComparison.describe(was)) recorded, \(ResponseComparison.describe(now)) now (looks volatile; not marked: kakapo cassette learn-volatile marks it)"
                    )
                } else if case .string(let a) = was, case .string(let b) = now,
                    ResponseComparison.isEnum(a, b, member: path.last)
                {
                    note(
                        .changed, path,
                        "\(ResponseComparison.describe(was)) recorded, \(ResponseComparison.describe(now)) now (a new enum value)"
                    )
                } else {
                    note(
                        .benign, path,
                        "\(ResponseComparison.describe(was)) recorded, \(ResponseComparison.describe(now)) now")
                }
            }
        }

        private func ignored(_ path: [String]) -> Bool {
            volatile.responseBody(path) || comparison.ignoredPointers.contains { path.starts(with: $0.components) }
        }

        private mutating func note(_ verdict: Verdict, _ path: [String], _ text: String) {
            guard found.count < ResponseComparison.reportedLimit else {
                skipped += 1
                skippedVerdict = max(skippedVerdict, verdict)
                return
            }
            let pointer = JSONPointer(components: path)
            found.append(
                Difference(
                    verdict: verdict, place: path.isEmpty ? nil : .body(pointer),
                    text: "body \(path.isEmpty ? "/" : pointer.description): \(text)"))
        }
    }

    /// True for values that change from call to call: both of one volatile shape (`ValueShape`: UUIDs,
    /// times, nonces), both timestamps in another layout, or a member whose name says so (`requestId`,
    /// `timestamp`, `...At`, `..._at`).
    static func isVolatile(_ pointer: JSONPointer, _ before: JSONValue?, _ after: JSONValue?) -> Bool {
        if let name = pointer.components.last?.lowercased() {
            if volatileKeys.contains(name) { return true }
            if let before, let after, before.kindDescription == after.kindDescription,
                name.hasSuffix("_at") || (name.count > 2 && pointer.components.last!.hasSuffix("At"))
            {
                return true
            }
        }
        let texts: (String, String)?
        switch (before, after) {
        case (.string(let a)?, .string(let b)?): texts = (a, b)
        case (.number(let a)?, .number(let b)?): texts = (a.literal, b.literal)
        default: texts = nil
        }
        guard let (a, b) = texts else { return false }
        if let shape = ValueShape.of(a, sentAt: nil), shape == ValueShape.of(b, sentAt: nil) { return true }
        return isTimestamp(a) && isTimestamp(b)
    }

    /// Member names that hold one of a fixed set of values.
    static let enumMembers: Set<String> = [
        "status", "state", "type", "kind", "role", "level", "mode", "phase", "category", "tier", "plan", "stage",
        "severity", "priority", "visibility", "scope", "currency", "unit", "format", "method", "action", "event",
    ]

    /// Whether `a` and `b` read as two values of an enum: both in upper case (`PENDING_REVIEW`), or both short
    /// lower-case words under a member whose name says it holds one (`status`, `type`, `payment_method`), so
    /// that a username `ada` becoming `bob` is not taken for one.
    static func isEnum(_ a: String, _ b: String, member: String?) -> Bool {
        guard isEnumLike(a), isEnumLike(b) else { return false }
        let upper = { (text: String) in text.utf8.allSatisfy { !(0x61...0x7A).contains($0) } }
        if upper(a) && upper(b) { return true }
        guard let member = member?.lowercased() else { return false }
        return enumMembers.contains { member == $0 || member.hasSuffix("_" + $0) || member.hasSuffix($0) }
    }

    /// A value that reads as one of a fixed set: a short word in lower case (`active`, `in-progress`) or
    /// upper case (`PENDING_REVIEW`), not a name or a sentence.
    static func isEnumLike(_ text: String) -> Bool {
        let bytes = text.utf8
        guard (1...40).contains(bytes.count), let first = bytes.first else { return false }
        let lower = bytes.allSatisfy {
            (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || $0 == 0x5F || $0 == 0x2D || $0 == 0x2E
        }
        let upper = bytes.allSatisfy { (0x41...0x5A).contains($0) || (0x30...0x39).contains($0) || $0 == 0x5F }
        return (lower && (0x61...0x7A).contains(first)) || (upper && (0x41...0x5A).contains(first))
    }

    /// True for a recorded value that redaction replaced (wholly, or a secret inside it).
    static func isRedacted(_ value: JSONValue?) -> Bool {
        guard case .string(let text)? = value else { return false }
        return text.contains(Redactor.placeholder)
    }

    static func isTimestamp(_ text: String) -> Bool {
        ISOTime.parse(text) != nil || HTTPDate.parse(text) != nil
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
