import KakapoHTTP
import KakapoJSON

/// Finds the recorded interaction for a request in constant time (a hash of method, path, query and
/// matched headers, then the body among the few candidates), and plays identical requests back in
/// recorded order.
///
/// Not thread-safe by itself: the proxy keeps it behind a lock.
public struct InteractionIndex: Sendable {
    /// What happens after the last recording of a repeated request has been played.
    public enum RepeatPolicy: Sendable {
        /// The last recording answers again (the default).
        case repeatLast
        /// The request becomes a miss.
        case miss
    }

    struct Entry: Sendable {
        let position: Int
        let body: ComparableBody
    }

    public let redactor: Redactor
    public let matching: MatchOptions
    public let repeatPolicy: RepeatPolicy
    private var buckets: [RequestKey: [Entry]] = [:]
    private var uses: [Int: Int] = [:]
    private var used: Set<Int> = []

    public init(
        redactor: Redactor = Redactor(), matching: MatchOptions = MatchOptions(),
        repeatPolicy: RepeatPolicy = .repeatLast
    ) {
        self.redactor = redactor
        self.matching = matching
        self.repeatPolicy = repeatPolicy
    }

    func key(_ request: HTTPRequest) -> RequestKey { RequestKey(request, redactor: redactor, matching: matching) }

    func comparableBody(_ request: HTTPRequest) -> ComparableBody {
        matching.matchBody
            ? ComparableBody(request.body, headers: request.headers, redactor: redactor, matching: matching) : .empty
    }

    /// Adds the interaction at `position` of the cassette to the index.
    public mutating func insert(_ interaction: Interaction, at position: Int) {
        buckets[key(interaction.request), default: []]
            .append(Entry(position: position, body: comparableBody(interaction.request)))
    }

    /// The positions of every interaction that matches `request`, in recorded order, without playing any.
    public func candidates(for request: HTTPRequest) -> [Int] {
        guard let bucket = buckets[key(request)] else { return [] }
        let body = comparableBody(request)
        return bucket.filter { $0.body.matches(body) }.map(\.position)
    }

    /// Plays `request`: the n-th identical request gets the n-th matching recording; after the last one,
    /// `repeatPolicy` decides. Returns the interaction's position in the cassette, or nil for a miss.
    public mutating func play(_ request: HTTPRequest) -> Int? {
        let matches = candidates(for: request)
        guard let first = matches.first else { return nil }
        let count = uses[first, default: 0]
        uses[first] = count + 1
        let chosen: Int
        if count < matches.count {
            chosen = matches[count]
        } else if repeatPolicy == .repeatLast {
            chosen = matches[matches.count - 1]
        } else {
            return nil
        }
        used.insert(chosen)
        return chosen
    }

    /// The positions that were played at least once.
    public var usedPositions: Set<Int> { used }
}
