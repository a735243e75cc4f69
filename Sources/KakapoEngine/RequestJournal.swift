import KakapoHTTP
import KakapoJSON
import KakapoRouter
import Synchronization

/// What the proxy answered, request by request: counts by source, the misses, and the most recent
/// entries for `/__kakapo/requests`. Thread-safe.
///
/// Bounded whatever the clients send: a URL longer than `urlLimit` bytes is cut with a marker before it
/// is kept (in the entries and the misses); of `byteLimit`, the recent entries' URLs hold at most half
/// (and `capacity` entries), the oldest dropped first, the counted paths and the misses a quarter each.
/// Paths longer than `urlLimit`, or past the limit, are not counted for verification (the count then
/// says it is incomplete). `clear()` lets the memory go.
public final class RequestJournal: Sendable {
    /// One answered request.
    public struct Entry: Sendable {
        public let method: String
        /// The URL, redacted and cut to `urlLimit` bytes.
        public let url: String
        public let status: Int
        public let source: ResponseSource
        public let milliseconds: Double
        /// The entry as the inspector's event stream sends it (id, time, host, sizes, session...); nil for a
        /// WebSocket message miss, journaled after its upgrade.
        package let event: InspectorEvent?
        /// A miss's line (`MissReport.line`): what the summary lists for it.
        let missLine: String?

        init(
            method: String, url: String, status: Int, source: ResponseSource, milliseconds: Double,
            event: InspectorEvent? = nil, missLine: String? = nil
        ) {
            self.method = method
            self.url = RequestJournal.bounded(url)
            self.status = status
            self.source = source
            self.milliseconds = milliseconds
            self.event = event
            self.missLine = missLine.map(RequestJournal.bounded)
        }
    }

    struct State {
        /// Answers by source, indexed by `ResponseSource.ordinal` (an array: hashing the source's name on
        /// every request cost more than the rest of the entry).
        var counts = [Int](repeating: 0, count: ResponseSource.allCases.count)
        var misses: [String] = []
        /// Bytes of the URLs in `misses`.
        var missBytes = 0
        /// The most recent entries, oldest first.
        var recent = RecentEntries()
        /// Bytes of the URLs in `recent`.
        var recentBytes = 0
        /// Requests by method and path (no query), since the start or the last clear, for verification.
        var byPath: [PathKey: Int] = [:]
        /// Bytes of the paths in `byPath`.
        var pathBytes = 0
        /// Requests not in `byPath` because it was full or their path too long.
        var uncounted = 0
    }

    struct PathKey: Hashable {
        let method: String
        let path: String
    }

    /// The most distinct method-and-path pairs counted for verification.
    static let distinctPathLimit = 100_000
    /// The longest URL kept whole, in bytes; longer ones are cut with a marker.
    static let urlLimit = 4096
    /// The most bytes of URLs and paths the journal holds.
    static let defaultByteLimit = 16 << 20

    private let state = Mutex(State())
    private let capacity: Int
    private let byteLimit: Int

    init(capacity: Int = 1000, byteLimit: Int = RequestJournal.defaultByteLimit) {
        self.capacity = capacity
        self.byteLimit = byteLimit
    }

    /// `url` as the journal keeps and logs it: whole up to `urlLimit` bytes, else cut there (on a
    /// character boundary) with `...[N more bytes]`.
    static func bounded(_ url: String) -> String {
        let count = url.utf8.count
        guard count > urlLimit else { return url }
        var end = url.utf8.index(url.utf8.startIndex, offsetBy: urlLimit)
        while end > url.startIndex && UTF8.isContinuation(url.utf8[end]) { end = url.utf8.index(before: end) }
        let kept = url[..<end]
        return kept + "...[\(count - kept.utf8.count) more bytes]"
    }

    /// Records an answered request; `target` is the request target as sent. An entry that is not `counted`
    /// (a WebSocket message missed on a connection already journaled) is left out of verification.
    func append(_ entry: Entry, target: String, counted: Bool = true) {
        // The path alone is counted for verification; most targets have no query and are the path.
        let path =
            target.hasPrefix("/") && !target.utf8.contains(UInt8(ascii: "?")) ? target : RequestJournal.path(of: target)
        append(entry, path: path, counted: counted)
    }

    private static func path(of target: String) -> String {
        RouterRegistry.hostAndPath(HTTP.Request(method: .get, target: target)).1
    }

    private func append(_ entry: Entry, path: String, counted: Bool) {
        state.withLock { state in
            state.counts[entry.source.ordinal] += 1
            // Admin requests are not part of the traffic under test, so verification does not count them.
            if entry.source != .admin && counted {
                let key = PathKey(method: entry.method, path: path)
                let size = path.utf8.count
                if let count = state.byPath[key] {
                    state.byPath[key] = count + 1
                } else if state.byPath.count < RequestJournal.distinctPathLimit, size <= RequestJournal.urlLimit,
                    state.pathBytes + size <= byteLimit / 4
                {
                    state.byPath[key] = 1
                    state.pathBytes += size
                } else {
                    state.uncounted += 1
                }
            }
            if entry.source == .miss {
                let miss = entry.missLine ?? "\(entry.method) \(entry.url)"
                if state.misses.count < 10_000 && state.missBytes + miss.utf8.count <= byteLimit / 4 {
                    state.misses.append(miss)
                    state.missBytes += miss.utf8.count
                }
            }
            state.recent.append(entry)
            state.recentBytes += entry.url.utf8.count
            while state.recent.count > capacity || (state.recentBytes > byteLimit / 2 && state.recent.count > 1) {
                state.recentBytes -= state.recent.removeFirst().url.utf8.count
            }
        }
    }

    /// How many requests (admin requests aside) since the start (or the last `clear()`) had `method` (nil for any) and a path
    /// that `pattern` matches; `complete` is false when some requests went uncounted (over the limit of
    /// distinct paths).
    public func count(method: String?, pattern: RoutePattern) -> (count: Int, complete: Bool) {
        let (byPath, uncounted) = state.withLock { ($0.byPath, $0.uncounted) }
        var total = 0
        for (key, count) in byPath where method == nil || key.method == method {
            if pattern.match(path: key.path) != nil { total += count }
        }
        return (total, uncounted == 0)
    }

    /// Forgets the requests counted for verification and the recent entries. The run's totals (the
    /// summary's counts and misses) are kept.
    public func clear() {
        state.withLock { state in
            state.byPath = [:]
            state.pathBytes = 0
            state.uncounted = 0
            state.recent = RecentEntries()
            state.recentBytes = 0
        }
    }

    /// How many answers each source gave.
    public var counts: [ResponseSource: Int] {
        let counts = state.withLock { $0.counts }
        return Dictionary(
            uniqueKeysWithValues: ResponseSource.allCases.lazy.filter { counts[$0.ordinal] > 0 }.map {
                ($0, counts[$0.ordinal])
            })
    }

    /// Every missed request as its line (`MissReport.line`: `METHOD url LABEL: first difference (interaction
    /// N)`), or `METHOD url` for a miss that has none, in order.
    public var misses: [String] { state.withLock { $0.misses } }

    /// The most recent entries, oldest first.
    public var recent: [Entry] { state.withLock { Array($0.recent) } }

    /// The journal as JSON, for the admin endpoint.
    var json: JSONValue {
        let counts = self.counts
        return .object([
            "counts": .object(
                JSONObject(ResponseSource.allCases.map { ($0.rawValue, .number(JSONNumber(counts[$0, default: 0]))) })),
            "requests": .array(recent.map { entry in entry.json(format3(entry.milliseconds)) }),
        ])
    }

    private func format3(_ value: Double) -> String {
        let rounded = (value * 1000).rounded() / 1000
        return rounded == rounded.rounded() ? String(Int(rounded)) : String(rounded)
    }
}

extension RequestJournal.Entry {
    /// The entry as `/__kakapo/requests` lists it: its URL as journaled (the target alone for a request that
    /// named no origin), status, source and time taken, and the inspector event's other fields (the source
    /// there says `recorded` for an upstream answer written into a cassette).
    func json(_ milliseconds: String) -> JSONValue {
        var object: JSONObject = [
            "method": .string(method), "url": .string(url), "status": .number(JSONNumber(status)),
            "source": .string(event?.source ?? source.rawValue), "ms": .number(JSONNumber(literal: milliseconds)),
        ]
        guard let event else { return .object(object) }
        object["id"] = .number(JSONNumber(event.id))
        object["time"] = .string(InspectorEvent.timestamp(event.milliseconds1970))
        object["host"] = .string(event.host)
        // `url` is the target already, unless the request named an origin (the journal's size stays as it was).
        if event.origin != nil { object["target"] = .string(event.target) }
        object["requestBytes"] = .number(JSONNumber(event.requestBytes))
        object["responseBytes"] = event.responseBytes.map { .number(JSONNumber($0)) } ?? .null
        if let contentType = event.contentType { object["contentType"] = .string(contentType) }
        if let session = event.session { object["session"] = .string(session) }
        if let interaction = event.interaction { object["interaction"] = .number(JSONNumber(interaction)) }
        object["stream"] = .bool(event.stream)
        object["webSocket"] = .bool(event.webSocket)
        return .object(object)
    }
}
