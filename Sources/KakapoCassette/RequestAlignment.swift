import KakapoHTTP
import KakapoJSON

/// A live request made to look like one recording where the two differ only in values a client makes afresh
/// for every call (design 5.3): values of the same volatile shape on both sides (`ValueShape`: UUIDs, times
/// near when each was sent, long random nonces) in the query, a form or JSON body or a known nonce header,
/// and anything at the recording's volatile request places (`VolatileFields`). Those values are taken from the
/// recording; the rest of the request stays as it came, so it then matches as any request does. Never path
/// segments (resource ids), nor the body fields named by `--match-body-field`; shapes only unless
/// `--strict-values`.
package enum RequestAlignment {
    /// Request headers that carry a nonce or a time of sending, aligned when they are matched (`--match-header`).
    static let nonceHeaders: Set<String> = [
        "idempotency-key", "x-idempotency-key", "x-request-id", "x-correlation-id", "x-amz-date", "x-date",
        "x-nonce", "x-timestamp", "traceparent", "x-b3-traceid", "x-trace-id", "request-id",
    ]

    /// The largest body looked into (on either side): bodies that carry nonces are small, and a miss must
    /// not parse megabytes once per recording of its path.
    static let bodyLimit = 64 * 1024

    /// A live request read once for aligning it to many recordings: its query items, and its body as form
    /// items or JSON when it is at most `bodyLimit` bytes.
    struct Live {
        let request: HTTP.Request
        let query: [QueryItem]
        let form: [QueryItem]?
        let json: JSONValue?

        init(_ request: HTTP.Request, matching: MatchOptions) {
            self.request = request
            query = request.queryItems
            var form: [QueryItem]?
            var json: JSONValue?
            if matching.matchBody, !request.body.isEmpty, request.body.count <= RequestAlignment.bodyLimit {
                if RequestAlignment.isForm(request) {
                    form = QueryItem.parse(String(decoding: request.body, as: UTF8.self))
                } else if JSONParser.looksLikeContainer(request.body) {
                    json = try? JSONParser.parse(request.body)
                }
            }
            self.form = form
            self.json = json
        }
    }

    /// Whether `request` carries an `application/x-www-form-urlencoded` body.
    package static func isForm(_ request: HTTP.Request) -> Bool {
        request.headers["Content-Type"]?.lowercased().hasPrefix("application/x-www-form-urlencoded") == true
    }

    /// The aligned request and the places taken from the recording (`body /nonce`, `query ts`, and
    /// `query seq (marked volatile)` for one the recording marks), or nil when nothing was taken (no such
    /// difference, or a method or path of another request).
    static func align(
        _ live: Live, to recording: Interaction, matching: MatchOptions, now: Int64
    ) -> (request: HTTP.Request, places: [String])? {
        let recorded = recording.request
        guard live.request.method == recorded.method, live.request.path == recorded.path else { return nil }
        var aligner = Aligner(
            volatile: recording.volatile, byShape: matching.matchesByShape, now: now,
            recordedAt: ISOTime.parse(recording.recordedAt)?.seconds, exact: matching.exactBodyFields)
        var request = live.request
        if let query = aligner.items(
            live.query, recorded.queryItems, part: "query",
            volatileName: {
                recording.volatile.requestQuery($0)
            })
        {
            request.target = live.request.path + "?" + Self.text(of: query)
        }
        for name in matching.matchedHeaders {
            let declared = recording.volatile.request.contains(.header(name))
            guard declared || nonceHeaders.contains(name), let here = live.request.headers[name],
                let there = recorded.headers[name], here != there,
                declared || aligner.sameShape(here, there, name: name)
            else { continue }
            request.headers.replaceOrAdd(name: name, value: there)
            aligner.places.append("header \(name)" + (declared ? Aligner.marked : ""))
        }
        if !recorded.body.isEmpty, recorded.body.count <= bodyLimit {
            if let form = live.form, isForm(recorded) {
                if let aligned = aligner.items(
                    form, QueryItem.parse(String(decoding: recorded.body, as: UTF8.self)), part: "body",
                    volatileName: { recording.volatile.requestBody([$0]) })
                {
                    request.body = Array(Self.text(of: aligned).utf8)
                }
            } else if let here = live.json, JSONParser.looksLikeContainer(recorded.body),
                let there = try? JSONParser.parse(recorded.body)
            {
                var changed = false
                let aligned = aligner.json(here, there, at: [], changed: &changed)
                if changed { request.body = JSONWriter().write(aligned) }
            }
        }
        return aligner.places.isEmpty ? nil : (request, aligner.places)
    }

    /// Whether a field's name says it holds the id of a resource: it ends in `id` or `ids` (`userId`,
    /// `order_id`, `ID`), unless it names a request, trace, span, correlation, idempotency key or nonce.
    static func namesResource(_ name: String) -> Bool {
        let lowered = name.lowercased()
        guard lowered.hasSuffix("id") || lowered.hasSuffix("ids") else { return false }
        return !["request", "trace", "span", "correlation", "idempotency", "nonce", "session"].contains {
            lowered.contains($0)
        }
    }

    /// `name=value&...` as the items were written.
    private static func text(of items: [QueryItem]) -> String {
        items.map { $0.name + ($0.value.map { "=" + $0 } ?? "") }.joined(separator: "&")
    }

    /// Takes values from the recording, noting where.
    private struct Aligner {
        let volatile: VolatileFields
        let byShape: Bool
        let now: Int64
        let recordedAt: Int64?
        let exact: [JSONPointer]
        var places: [String] = []
        /// How many values were looked at: a body of a million leaves is not walked past `limit`.
        var visited = 0
        static let limit = 10_000
        /// Follows a place matched because the recording marks it volatile, not by its shape.
        static let marked = " (marked volatile)"

        init(volatile: VolatileFields, byShape: Bool, now: Int64, recordedAt: Int64?, exact: [JSONPointer]) {
            self.volatile = volatile
            self.byShape = byShape
            self.now = now
            self.recordedAt = recordedAt
            self.exact = exact
        }

        /// Whether `here` and `there`, the values of `name`, are of one volatile shape. Hex and base64 under a
        /// name that says it is an id (`userId`, `order_id`; not `requestId`, `traceId`) are taken for ids of
        /// resources (MongoDB's ObjectIds, Firestore's ids), not nonces.
        func sameShape(_ here: String, _ there: String, name: String) -> Bool {
            guard byShape, let shape = ValueShape.same(here, there, now: now, recordedAt: recordedAt) else {
                return false
            }
            switch shape {
            case .hex, .base64: return !RequestAlignment.namesResource(name)
            default: return true
            }
        }

        /// Whether `path` is, holds or lies under a field named by `--match-body-field`.
        func isExact(_ path: [String]) -> Bool {
            exact.contains { path.starts(with: $0.components) || $0.components.starts(with: path) }
        }

        /// Query or form items with the recorded value of each volatile one (the n-th of a name paired with
        /// the recording's n-th); nil when none changed.
        mutating func items(
            _ live: [QueryItem], _ recorded: [QueryItem], part: String, volatileName: (String) -> Bool
        ) -> [QueryItem]? {
            var byName: [String: [QueryItem]] = [:]
            for item in recorded { byName[item.name.removingPercentEncodingLeniently(), default: []].append(item) }
            var seen: [String: Int] = [:]
            var result = live
            var changed = false
            for (index, item) in live.enumerated() {
                let name = item.name.removingPercentEncodingLeniently()
                let occurrence = seen[name, default: 0]
                seen[name] = occurrence + 1
                guard let recordedItems = byName[name], occurrence < recordedItems.count,
                    let here = item.value?.removingPercentEncodingLeniently(),
                    let there = recordedItems[occurrence].value?.removingPercentEncodingLeniently(), here != there
                else { continue }
                let declared = volatileName(name)
                guard declared || sameShape(here, there, name: name), part == "query" || !isExact([name]) else {
                    continue
                }
                result[index].value = recordedItems[occurrence].value
                places.append((part == "query" ? "query \(name)" : "body /\(name)") + (declared ? Self.marked : ""))
                changed = true
            }
            return changed ? result : nil
        }

        /// `live` with the recorded value at each volatile leaf (same structure on both sides only).
        mutating func json(_ live: JSONValue, _ recorded: JSONValue, at path: [String], changed: inout Bool)
            -> JSONValue
        {
            visited += 1
            guard visited <= Self.limit else { return live }
            if !path.isEmpty, volatile.requestBody(path), live != recorded,
                !isExact(path)
            {
                changed = true
                places.append("body " + JSONPointer(components: path).description + Self.marked)
                return recorded
            }
            switch (live, recorded) {
            case (.object(let here), .object(let there)):
                var result = JSONObject()
                for (key, value) in here {
                    guard let counterpart = there[key] else {
                        result.append(key: key, value: value)
                        continue
                    }
                    result.append(key: key, value: json(value, counterpart, at: path + [key], changed: &changed))
                }
                return .object(result)
            case (.array(let here), .array(let there)):
                var result = here
                for index in here.indices where index < there.count {
                    result[index] = json(here[index], there[index], at: path + [String(index)], changed: &changed)
                }
                return .array(result)
            case (.string(let here), .string(let there)) where here != there:
                return leaf(live, recorded, here, there, at: path, changed: &changed)
            case (.number(let here), .number(let there)) where here.literal != there.literal:
                return leaf(live, recorded, here.literal, there.literal, at: path, changed: &changed)
            default:
                return live
            }
        }

        private mutating func leaf(
            _ live: JSONValue, _ recorded: JSONValue, _ here: String, _ there: String, at path: [String],
            changed: inout Bool
        ) -> JSONValue {
            guard sameShape(here, there, name: path.last ?? ""), !isExact(path) else {
                return live
            }
            changed = true
            places.append("body " + JSONPointer(components: path).description)
            return recorded
        }
    }
}
