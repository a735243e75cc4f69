import KakapoGraphQL
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

    /// Recordings of one request key whose bodies are the same, in recorded order: a request that
    /// matches one matches all, so lookups cost the number of distinct bodies, not of recordings.
    struct Group: Sendable {
        let redacted: RedactedPlaces
        /// The recorded body without its redacted places.
        let body: ComparableBody
        /// The origin the recordings were sent to; nil for recordings made with one `--upstream`.
        let origin: String?
        /// The range, validators, varied headers and coding the recordings answer; nil for plain answers
        /// to plain requests.
        let representation: Representation?
        var positions: [Int]

        init(position: Int, body: ComparableBody, origin: String?, representation: Representation?) {
            self.redacted = body.redactedPlaces
            self.body = body.removing(redacted)
            self.origin = origin
            self.representation = representation
            self.positions = [position]
        }

        func matches(_ live: ComparableBody) -> Bool { body.matches(live.removing(redacted)) }

        /// Whether a request whose `Range` is `range` asks for the representation these recordings answer.
        func admits(_ request: HTTP.Request, range: String?, bodiless: Bool) -> Bool {
            guard let representation else { return range == nil }
            return representation.admits(request, range: range, bodiless: bodiless)
        }
    }

    public let redactor: Redactor
    public let matching: MatchOptions
    public let repeatPolicy: RepeatPolicy
    private var buckets: [RequestKey: [Group]] = [:]
    /// Query parameters recorded with a redacted value: their values are ignored, whatever the redactor
    /// of this run says.
    private var redactedQueryNames: Set<String> = []
    /// The positions of the recordings of each method and path (`METHOD /path`), for matching by shape
    /// (`RequestAlignment`), which looks only when a request matches nothing as it is.
    private var byPath: [String: [Int]] = [:]
    /// Whether any recording has volatile request places (matched by them even with `--strict-values`).
    private var hasVolatileRequests = false
    /// How often each request was played, by the position of its first recording; grown on first use.
    /// Arrays by position rather than dictionaries: a full pass over 100,000 recordings costs 500 KB,
    /// not 6 MB.
    private var uses: [UInt32] = []
    /// Whether each position was played.
    private var used: [Bool] = []

    public init(
        redactor: Redactor = Redactor(), matching: MatchOptions = MatchOptions(),
        repeatPolicy: RepeatPolicy = .repeatLast
    ) {
        self.redactor = redactor
        self.matching = matching
        self.repeatPolicy = repeatPolicy
    }

    /// `outside` is the request's GraphQL operation in a GET or `application/graphql` form, if any
    /// (`GraphQLRequest(outsideJSONBody:)`, read once for both the key and the body).
    func key(_ request: HTTP.Request, outside: GraphQLRequest?) -> RequestKey {
        RequestKey(
            request, redactor: redactor, matching: matching, alsoSecret: redactedQueryNames,
            graphQLInParameters: outside != nil)
    }

    func comparableBody(_ request: HTTP.Request, outside: GraphQLRequest?) -> ComparableBody {
        matching.matchBody
            ? ComparableBody(request, outside: outside, redactor: redactor, matching: matching) : .empty
    }

    /// Adds the interaction at `position` of the cassette to the index.
    public mutating func insert(_ interaction: Interaction, at position: Int) {
        for item in interaction.request.queryItems where item.value == Redactor.placeholder {
            let name = item.name.removingPercentEncodingLeniently()
            if !redactor.isSecretQueryParameter(name) && !redactedQueryNames.contains(name) {
                redactedQueryNames.insert(name)
                rebuildKeys()
            }
        }
        let outside = GraphQLRequest(outsideJSONBody: interaction.request)
        let body = comparableBody(interaction.request, outside: outside)
        let bucketKey = key(interaction.request, outside: outside)
        byPath[bucketKey.method + " " + bucketKey.path, default: []].append(position)
        if !interaction.volatile.request.isEmpty { hasVolatileRequests = true }
        let candidate = Group(
            position: position, body: body, origin: interaction.request.origin,
            representation: Representation(
                request: interaction.request, response: interaction.response, matching: matching, redactor: redactor))
        // Mutated in place, so appending to a long group does not copy it.
        if let index = buckets[bucketKey]?.firstIndex(where: {
            $0.origin == candidate.origin && $0.representation == candidate.representation
                && $0.redacted == candidate.redacted && $0.body.matches(candidate.body)
        }) {
            buckets[bucketKey]![index].positions.append(position)
        } else {
            buckets[bucketKey, default: []].append(candidate)
        }
    }

    /// The positions of every interaction that matches `request`, in recorded order, without playing any.
    ///
    /// Origins: a request addressed to an origin matches recordings of that origin, or, when there are
    /// none, recordings without one (made with `--upstream`, so cassettes from before forward proxying keep
    /// working); a request without an origin matches recordings of any origin.
    ///
    /// Representation: a recording made with a `Range` answers only that range, a `304` only its validators,
    /// a response with `Vary` only the same values of the headers it names, an encoded one only a request
    /// that accepts its coding (`MatchOptions`); the playback order of identical requests is unchanged.
    public func candidates(for request: HTTP.Request) -> [Int] {
        candidates(for: request, bodiless: false)
    }

    /// `bodiless`: the request is a `HEAD` looking for a `GET` recording, whose content-coding does not
    /// matter.
    func candidates(for request: HTTP.Request, bodiless: Bool) -> [Int] {
        let outside = GraphQLRequest(outsideJSONBody: request)
        guard var groups = buckets[key(request, outside: outside)] else { return [] }
        let range = matching.matchRange ? request.headers["Range"] : nil
        if groups.count == 1, request.origin == nil || groups[0].origin == request.origin {
            // The usual case: one group, so no lists to filter.
            guard groups[0].admits(request, range: range, bodiless: bodiless) else { return [] }
            return groups[0].matches(comparableBody(request, outside: outside)) ? groups[0].positions : []
        }
        if let origin = request.origin {
            let own = groups.filter { $0.origin == origin }
            groups = own.isEmpty ? groups.filter { $0.origin == nil } : own
        }
        let body = comparableBody(request, outside: outside)
        var matching = groups.filter { $0.admits(request, range: range, bodiless: bodiless) && $0.matches(body) }
        if matching.count == 1 { return matching[0].positions }
        matching.sort { $0.positions[0] < $1.positions[0] }
        return matching.flatMap(\.positions).sorted()
    }

    /// Recomputes every key after a query parameter was found redacted (rare: only names outside the
    /// redactor's list, from a run with other options).
    private mutating func rebuildKeys() {
        var rebuilt: [RequestKey: [Group]] = [:]
        for (key, bucket) in buckets {
            let fixed = RequestKey(
                method: key.method, path: key.path,
                query: key.query.map {
                    redactedQueryNames.contains($0.name) ? QueryItem(name: $0.name, value: Redactor.placeholder) : $0
                }.sorted(), headers: key.headers)
            rebuilt[fixed, default: []].append(contentsOf: bucket)
        }
        for key in rebuilt.keys { rebuilt[key]!.sort { $0.positions[0] < $1.positions[0] } }
        buckets = rebuilt
    }

    /// Plays `request`: the n-th identical request gets the n-th matching recording; after the last one,
    /// `repeatPolicy` decides. Returns the interaction's position in the cassette, or nil for a miss.
    ///
    /// A `HEAD` with no recording of its own is answered, as servers do, from the `GET` recording that an
    /// identical `GET` would get now (the caller sends its head only): that recording counts as used, but
    /// the `GET`'s playback does not advance, so a `HEAD` before a `GET` takes nothing from it. Once every
    /// `GET` recording was played and the policy is `.miss`, the `HEAD` misses too.
    public mutating func play(_ request: HTTP.Request) -> Int? {
        let matches = candidates(for: request)
        if matches.isEmpty, request.method == .head {
            var get = request
            get.method = .get
            return take(candidates(for: get, bodiless: true), advancing: false)
        }
        return take(matches, advancing: true)
    }

    /// How many recordings of one method and path matching by shape compares a request with, at most: the
    /// first ones not played yet (so a poll that sends a new timestamp each time goes on through all its
    /// recordings), or the last ones once all were played.
    static let alignedLimit = 64

    /// Plays `request` as `play` does when it matches no recording as it is but one by shape or at that
    /// recording's volatile places (`RequestAlignment`): the recording and the places taken from it
    /// (`body /nonce`), or nil. Identical requests by shape play their recordings in order, as `play` does.
    public mutating func playAligned(
        _ request: HTTP.Request, interactions: [Interaction], now: Int64
    ) -> (position: Int, places: [String])? {
        takeAligned(alignedMatches(request, interactions: interactions, now: now))
    }

    /// The recordings `request` matches by shape, with the places taken from each; empty when none (or when
    /// neither shapes nor volatile places are matched). Reads only: a caller may run it on a copy of the
    /// index, outside its lock, then `takeAligned` under it.
    public func alignedMatches(
        _ request: HTTP.Request, interactions: [Interaction], now: Int64
    ) -> [Int: [String]] {
        guard matching.matchesByShape || hasVolatileRequests else { return [:] }
        guard let positions = byPath[RequestKey.loose(request)] else { return [:] }
        let unplayed = positions.filter { !wasPlayed($0) }
        let window =
            unplayed.isEmpty ? Array(positions.suffix(Self.alignedLimit)) : Array(unplayed.prefix(Self.alignedLimit))
        var found: [Int: [String]] = [:]
        let live = RequestAlignment.Live(request, matching: matching)
        for position in window where found[position] == nil {
            guard position < interactions.count,
                let (aligned, places) = RequestAlignment.align(
                    live, to: interactions[position], matching: matching, now: now)
            else { continue }
            let matches = candidates(for: aligned)
            guard matches.contains(position) else { continue }
            for match in matches where found[match] == nil { found[match] = places }
        }
        return found
    }

    /// Plays one of `found` (`alignedMatches`): the first not played yet; once all were, the last (or none
    /// with `RepeatPolicy.miss`).
    public mutating func takeAligned(_ found: [Int: [String]]) -> (position: Int, places: [String])? {
        let sorted = found.keys.sorted()
        guard let last = sorted.last else { return nil }
        let chosen: Int
        if let first = sorted.first(where: { !wasPlayed($0) }) {
            chosen = first
        } else if repeatPolicy == .repeatLast {
            chosen = last
        } else {
            return nil
        }
        grow(to: chosen + 1)
        used[chosen] = true
        return (chosen, found[chosen] ?? [])
    }

    /// Whether the recording at `position` was played.
    private func wasPlayed(_ position: Int) -> Bool { position < used.count && used[position] }

    /// Grows the playback arrays to `count` positions (they grow only to the positions plays touch).
    private mutating func grow(to count: Int) {
        guard count > uses.count else { return }
        uses += repeatElement(0, count: count - uses.count)
        used += repeatElement(false, count: count - used.count)
    }

    /// The recording that `matches` (one request's candidates, in cassette order) give now, marked used, or
    /// nil; `advancing` moves their playback on to the next one (a `HEAD` answered from a `GET` recording
    /// does not).
    private mutating func take(_ matches: [Int], advancing: Bool) -> Int? {
        guard let first = matches.first else { return nil }
        let count = first < uses.count ? Int(uses[first]) : 0
        let chosen: Int?
        if count < matches.count {
            chosen = matches[count]
        } else {
            chosen = repeatPolicy == .repeatLast ? matches[matches.count - 1] : nil
        }
        grow(to: max(first, chosen ?? first) + 1)
        if advancing, count < Int(UInt32.max) { uses[first] += 1 }
        guard let chosen else { return nil }
        used[chosen] = true
        return chosen
    }

    /// The positions that were played at least once.
    public var usedPositions: Set<Int> {
        Set(used.indices.lazy.filter { used[$0] })
    }
}
