import KakapoHTTP
import KakapoJSON
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
        var counts: [ResponseSource: Int] = [:]
        var misses: [String] = []
        var recent: [Entry] = []
        var next = 0
    }

    private let state = NIOLockedValueBox(State())
    private let capacity: Int

    init(capacity: Int = 1000) { self.capacity = capacity }

    func append(_ entry: Entry) {
        state.withLockedValue { state in
            state.counts[entry.source, default: 0] += 1
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

    /// How many answers each source gave.
    public var counts: [ResponseSource: Int] { state.withLockedValue { $0.counts } }

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
