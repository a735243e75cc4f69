import KakapoHTTP
import KakapoJSON
import KakapoRouter
import NIOConcurrencyHelpers

/// What the proxy answered, request by request: counts by source, the misses, and the most recent
/// entries for `/__kakapo/requests`. Thread-safe.
public final class RequestJournal: Sendable {
    /// One answered request.
    public struct Entry: Sendable {
        public let method: String
        public let url: String
        public let status: Int
        public let source: ResponseSource
        public let milliseconds: Double
    }

    struct State {
        /// Answers by source, indexed by `ResponseSource.ordinal` (an array: hashing the source's name on
        /// every request cost more than the rest of the entry).
        var counts = [Int](repeating: 0, count: ResponseSource.allCases.count)
        var misses: [String] = []
        var recent: [Entry] = []
        var next = 0
        /// Requests by method and path (no query), since the start or the last clear, for verification.
        var byPath: [PathKey: Int] = [:]
        /// Requests not in `byPath` because it was full.
        var uncounted = 0
    }

    struct PathKey: Hashable {
        let method: String
        let path: String
    }

    /// The most distinct method-and-path pairs counted for verification.
    static let distinctPathLimit = 100_000

    private let state = NIOLockedValueBox(State())
    private let capacity: Int

    init(capacity: Int = 1000) { self.capacity = capacity }

    /// Records an answered request; `target` is the request target as sent.
    func append(_ entry: Entry, target: String) {
        // The path alone is counted for verification; most targets have no query and are the path.
        let path =
            target.hasPrefix("/") && !target.utf8.contains(UInt8(ascii: "?")) ? target : RequestJournal.path(of: target)
        append(entry, path: path)
    }

    private static func path(of target: String) -> String {
        RouterRegistry.hostAndPath(HTTPRequest(method: .get, target: target)).1
    }

    private func append(_ entry: Entry, path: String) {
        state.withLockedValue { state in
            state.counts[entry.source.ordinal] += 1
            // Admin requests are not part of the traffic under test, so verification does not count them.
            if entry.source != .admin {
                let key = PathKey(method: entry.method, path: path)
                if let count = state.byPath[key] {
                    state.byPath[key] = count + 1
                } else if state.byPath.count < RequestJournal.distinctPathLimit {
                    state.byPath[key] = 1
                } else {
                    state.uncounted += 1
                }
            }
            if entry.source == .miss && state.misses.count < 10_000 {
                state.misses.append("\(entry.method) \(entry.url)")
            }
            if state.recent.count < capacity {
                state.recent.append(entry)
            } else {
                state.recent[state.next] = entry
            }
            state.next = (state.next + 1) % capacity
        }
    }

    /// How many requests (admin requests aside) since the start (or the last `clear()`) had `method` (nil for any) and a path
    /// that `pattern` matches; `complete` is false when some requests went uncounted (over the limit of
    /// distinct paths).
    public func count(method: String?, pattern: RoutePattern) -> (count: Int, complete: Bool) {
        let (byPath, uncounted) = state.withLockedValue { ($0.byPath, $0.uncounted) }
        var total = 0
        for (key, count) in byPath where method == nil || key.method == method {
            if pattern.match(path: key.path) != nil { total += count }
        }
        return (total, uncounted == 0)
    }

    /// Forgets the requests counted for verification and the recent entries. The run's totals (the
    /// summary's counts and misses) are kept.
    public func clear() {
        state.withLockedValue { state in
            state.byPath = [:]
            state.uncounted = 0
            state.recent = []
            state.next = 0
        }
    }

    /// How many answers each source gave.
    public var counts: [ResponseSource: Int] {
        let counts = state.withLockedValue { $0.counts }
        return Dictionary(
            uniqueKeysWithValues: ResponseSource.allCases.lazy.filter { counts[$0.ordinal] > 0 }.map {
                ($0, counts[$0.ordinal])
            })
    }

    /// Every missed request as `METHOD url`, in order.
    public var misses: [String] { state.withLockedValue { $0.misses } }

    /// The most recent entries, oldest first.
    public var recent: [Entry] {
        state.withLockedValue { state in
            state.recent.count < capacity
                ? state.recent : Array(state.recent[state.next...] + state.recent[..<state.next])
        }
    }

    /// The journal as JSON, for the admin endpoint.
    var json: JSONValue {
        let counts = self.counts
        return .object([
            "counts": .object(
                JSONObject(ResponseSource.allCases.map { ($0.rawValue, .number(JSONNumber(counts[$0, default: 0]))) })),
            "requests": .array(
                recent.map { entry in
                    .object([
                        "method": .string(entry.method), "url": .string(entry.url),
                        "status": .number(JSONNumber(entry.status)), "source": .string(entry.source.rawValue),
                        "ms": .number(JSONNumber(literal: String(format3(entry.milliseconds)))),
                    ])
                }),
        ])
    }

    private func format3(_ value: Double) -> String {
        let rounded = (value * 1000).rounded() / 1000
        return rounded == rounded.rounded() ? String(Int(rounded)) : String(rounded)
    }
}
