import KakapoGraphQL
import KakapoHTTP
import KakapoJSON

/// Explains a miss: the request, and the recorded interactions closest to it with what differed
/// (design 5.4).
public struct MissReport: Sendable {
    /// One recorded interaction that came close, and how it differs from the request.
    public struct Candidate: Sendable {
        public let position: Int
        public let method: String
        public let url: String
        public let differences: [String]
        /// The same differences structured, for the inspector (one per line of `differences`, except that
        /// a recording already played has no field).
        public let fields: [Field]
    }

    public let method: String
    public let url: String
    /// The GraphQL operation, JSON-RPC method or `(gRPC)` that names the request (`RequestLabel`).
    public let label: String?
    public let nearest: [Candidate]

    /// How many recordings at most are compared in full (query, headers, body): on a large cassette the
    /// others are passed over by a cheap first look at host, method and path, so a miss costs little
    /// however many recordings there are.
    public static let comparedLimit = 64

    /// How many recordings were compared in full.
    public let compared: Int

    /// Ranks the recorded interactions against `request` and keeps the closest `limit`: every one by
    /// host, method and path (cheap, without copying), then the `comparedLimit` closest of those in full.
    public init(
        request: HTTP.Request, cassette: Cassette, redactor: Redactor, matching: MatchOptions = MatchOptions(),
        limit: Int = 3
    ) {
        self.method = request.method.rawValue
        self.url = redactor.redactedURL(of: request)
        self.label = RequestLabel.of(request)
        let (key, body) = Self.keyAndBody(of: request, redactor: redactor, matching: matching)
        let operationName = Self.operationName(of: body)
        // A full score is never below the first look's, so the closest recordings are among the best of it.
        var shortlist: [(score: Int, position: Int)] = []
        shortlist.reserveCapacity(Self.comparedLimit + 1)
        for (position, interaction) in cassette.interactions.enumerated() {
            var score = Self.roughScore(of: interaction.request, against: request, path: key.path)
            if let operationName, !Self.mayName(operationName, interaction.request) {
                score += Self.otherOperationScore
            }
            if shortlist.count == Self.comparedLimit, let worst = shortlist.last, worst.score <= score { continue }
            let index = shortlist.firstIndex { $0.score > score } ?? shortlist.endIndex
            shortlist.insert((score, position), at: index)
            if shortlist.count > Self.comparedLimit { shortlist.removeLast() }
        }
        var scored: [(score: Int, position: Int, differences: [String], fields: [Field])] = []
        let now = WallClock.seconds
        let aligning = RequestAlignment.Live(request, matching: matching)
        for (_, position) in shortlist {
            let interaction = cassette.interactions[position]
            // Values that match by shape (or at the recording's volatile places) are no difference: the
            // request is compared as aligned to this recording (`RequestAlignment`).
            var (live, liveKey, liveBody) = (request, key, body)
            if let aligned = RequestAlignment.align(aligning, to: interaction, matching: matching, now: now) {
                live = aligned.request
                (liveKey, liveBody) = Self.keyAndBody(of: live, redactor: redactor, matching: matching)
            }
            let (score, differences, fields) = Self.compare(
                interaction.request, with: live, key: liveKey, body: liveBody, redactor: redactor,
                matching: matching, response: interaction.response)
            scored.append((score, position, differences, fields))
        }
        scored.sort { $0.score != $1.score ? $0.score < $1.score : $0.position < $1.position }
        self.compared = scored.count
        self.nearest = scored.prefix(limit).map { entry in
            let recorded = cassette.interactions[entry.position].request
            return Candidate(
                position: entry.position, method: recorded.method.rawValue, url: redactor.redactedURL(of: recorded),
                differences: entry.differences, fields: entry.fields)
        }
    }

    /// What `request` is compared by: its key and its comparable body (empty when bodies are not compared).
    static func keyAndBody(of request: HTTP.Request, redactor: Redactor, matching: MatchOptions) -> (
        RequestKey, ComparableBody
    ) {
        let outside = GraphQLRequest(outsideJSONBody: request)
        let key = RequestKey(
            request, redactor: redactor, matching: matching, alsoSecret: [], graphQLInParameters: outside != nil)
        let body =
            matching.matchBody
            ? ComparableBody(request, outside: outside, redactor: redactor, matching: matching) : .empty
        return (key, body)
    }

    /// What a recording of another GraphQL operation adds to the score: as much as another method, so the
    /// nearest recordings of a GraphQL miss are those of its own operation.
    static let otherOperationScore = 4

    /// How far into a recording the first look searches for an operation's name; past it, the recording is
    /// given the benefit of the doubt (its full comparison decides).
    static let operationNameScanLimit = 64 * 1024

    /// The name of the request's GraphQL operation (the first of a batch), as bytes; nil for other requests,
    /// anonymous operations and a name that is not a GraphQL name (`[_A-Za-z][_0-9A-Za-z]*`), which no
    /// recording can hold as one.
    static func operationName(of body: ComparableBody) -> [UInt8]? {
        guard case .graphQL(_, let request) = body, let name = request.operations.first?.name, !name.isEmpty
        else { return nil }
        let bytes = Array(name.utf8)
        guard bytes.allSatisfy(isNameByte), !(UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[0]) else {
            return nil
        }
        return bytes
    }

    /// False only when `recorded` cannot be of the operation `name`: the name is nowhere in its target or in
    /// the first `operationNameScanLimit` bytes of its body, as a whole word. Cheap (one pass over each, however
    /// long the name), so a cassette of thousands of operations on one URL still shortlists the right ones.
    static func mayName(_ name: [UInt8], _ recorded: HTTP.Request) -> Bool {
        if recorded.body.count > operationNameScanLimit { return true }
        return holdsWord(name, in: recorded.body) || holdsWord(name, in: Array(recorded.target.utf8))
    }

    /// Whether `word` is one of the runs of name bytes in `text`: each byte is looked at once, and a run is
    /// compared only when it is as long as the word, so the time is linear in `text` whatever `word` is.
    private static func holdsWord(_ word: [UInt8], in text: [UInt8]) -> Bool {
        guard !word.isEmpty, text.count >= word.count else { return false }
        var start = 0
        var index = 0
        while index <= text.count {
            if index < text.count, isNameByte(text[index]) {
                index += 1
                continue
            }
            if index - start == word.count, text[start..<index].elementsEqual(word) { return true }
            index += 1
            start = index
        }
        return false
    }

    private static func isNameByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"):
            true
        default:
            false
        }
    }

    /// The part of the score that host, method and path make, worked out on the bytes as they are.
    static func roughScore(of recorded: HTTP.Request, against request: HTTP.Request, path: String) -> Int {
        var score = 0
        if let origin = request.origin, let recordedOrigin = recorded.origin, origin != recordedOrigin { score += 16 }
        if recorded.method != request.method { score += 4 }
        let recordedPath = recorded.target.utf8.prefix { $0 != UInt8(ascii: "?") }
        if String.percentEncodingNeedsNormalizing(recordedPath) {
            // Escapes compared as the index compares them (rare: copied only here).
            let normalized = String(decoding: recordedPath, as: UTF8.self).percentEncodingNormalized()
            if normalized != path { score += 8 + distance(normalized.utf8, path.utf8) }
        } else if !recordedPath.elementsEqual(path.utf8) {
            score += 8 + distance(recordedPath, path.utf8)
        }
        return score
    }

    /// How `recorded` differs from `request` (whose key and comparable body are given), and the score
    /// that ranks it: lower is closer.
    static func compare(
        _ recorded: HTTP.Request, with request: HTTP.Request, key: RequestKey, body: ComparableBody, redactor: Redactor,
        matching: MatchOptions, response: HTTP.Response? = nil
    ) -> (score: Int, differences: [String], fields: [Field]) {
        let recordedOutside = GraphQLRequest(outsideJSONBody: recorded)
        let recordedKey = RequestKey(
            recorded, redactor: redactor, matching: matching, alsoSecret: [],
            graphQLInParameters: recordedOutside != nil)
        var differences: [String] = []
        var fields: [Field] = []
        var score = 0
        if let origin = request.origin, let recordedOrigin = recorded.origin, origin != recordedOrigin {
            differences.append("host: \(origin) here, \(recordedOrigin) recorded")
            fields.append(Field(.host, here: origin, recorded: recordedOrigin))
            score += 16
        }
        if recordedKey.method != key.method {
            differences.append("method: \(key.method) here, \(recordedKey.method) recorded")
            fields.append(Field(.method, here: key.method, recorded: recordedKey.method))
            score += 4
        }
        if recordedKey.path != key.path {
            differences.append("path: \(key.path) here, \(recordedKey.path) recorded")
            fields.append(Field(.path, here: key.path, recorded: recordedKey.path))
            score += 8 + MissReport.distance(recordedKey.path, key.path)
        }
        let here = Set(key.query.map(\.name))
        let there = Set(recordedKey.query.map(\.name))
        for name in here.subtracting(there).sorted() {
            differences.append("query parameter \(name): present here, absent in the recording")
            fields.append(
                Field(
                    .query, name: name,
                    here: key.query.filter { $0.name == name }.map { $0.value ?? "" }.joined(separator: ",")))
            score += 2
        }
        for name in there.subtracting(here).sorted() {
            differences.append("query parameter \(name): absent here, present in the recording")
            fields.append(
                Field(
                    .query, name: name,
                    recorded: recordedKey.query.filter { $0.name == name }.map { $0.value ?? "" }.joined(
                        separator: ",")))
            score += 2
        }
        for name in here.intersection(there).sorted() {
            let a = key.query.filter { $0.name == name }.map { $0.value ?? "" }
            let b = recordedKey.query.filter { $0.name == name }.map { $0.value ?? "" }
            if a != b {
                differences.append(
                    "query parameter \(name): \(a.joined(separator: ",")) here, \(b.joined(separator: ",")) recorded")
                fields.append(
                    Field(.query, name: name, here: a.joined(separator: ","), recorded: b.joined(separator: ",")))
                score += 1
            }
        }
        for (name, pair) in zip(matching.matchedHeaders, zip(key.headers, recordedKey.headers)) where pair.0 != pair.1 {
            differences.append("header \(name): \"\(pair.0)\" here, \"\(pair.1)\" recorded")
            fields.append(Field(.header, name: name, here: pair.0, recorded: pair.1))
            score += 1
        }
        if matching.matchBody {
            let recordedBody = ComparableBody(
                recorded, outside: recordedOutside, redactor: redactor, matching: matching)
            let redacted = recordedBody.redactedPlaces
            let recordedSide = recordedBody.removing(redacted)
            let liveSide = body.removing(redacted)
            var bodyDifferences = recordedSide.differences(from: liveSide, redactor: redactor)
            var otherOperation = recordedSide.isOtherOperation(than: liveSide)
            // The same document with another operation chosen is as near as one difference.
            if otherOperation,
                let chosen = otherOperationChosen(recorded: recordedSide, live: liveSide, lines: bodyDifferences)
            {
                bodyDifferences = chosen
                otherOperation = false
            }
            differences += bodyDifferences
            fields += bodyFields(recorded: recordedSide, live: liveSide, lines: bodyDifferences)
            score += otherOperation ? otherOperationScore : min(bodyDifferences.count, 1)
        }
        representationDifferences(
            recorded, response: response, with: request, redactor: redactor, matching: matching,
            differences: &differences, fields: &fields, score: &score)
        if differences.isEmpty {
            differences.append("matched, but every recording of this request was already played")
        }
        return (score, differences, fields)
    }

    /// The report as the JSON body of a miss response.
    public var json: JSONValue { json(fields: false) }

    /// The report as JSON; with `fields`, each nearest recording also has its differences as `fields`
    /// (`Field.json`), for the inspector (the miss body leaves them out: people read it in terminals).
    public func json(fields: Bool) -> JSONValue {
        var request: JSONObject = ["method": .string(method), "url": .string(url)]
        if let label { request["label"] = .string(label) }
        let message = self.message
        return .object([
            "error": Self.errorJSON(message: message),
            "message": .string(message),
            "request": .object(request),
            "nearest": .array(
                nearest.map { candidate in
                    var object: JSONObject = [
                        "interaction": .number(JSONNumber(candidate.position)),
                        "method": .string(candidate.method),
                        "url": .string(candidate.url),
                        "differences": .array(candidate.differences.map { .string($0) }),
                    ]
                    if fields { object["fields"] = .array(candidate.fields.map(\.json)) }
                    return .object(object)
                }),
        ])
    }

    /// A crude edit distance between paths, by differing segments, so `/users/2` ranks near `/users/1`.
    static func distance(_ a: String, _ b: String) -> Int { distance(a.utf8, b.utf8) }

    /// `distance` on the bytes of two paths, without copying them.
    static func distance<A: Collection<UInt8>, B: Collection<UInt8>>(_ a: A, _ b: B) -> Int {
        // A missing or extra segment counts more than a changed one: `/users/7` is nearer `/users/1`
        // than `/users`.
        let slash = UInt8(ascii: "/")
        let x = a.split(separator: slash, omittingEmptySubsequences: true)
        let y = b.split(separator: slash, omittingEmptySubsequences: true)
        var distance = 3 * abs(x.count - y.count)
        for (p, q) in zip(x, y) where !p.elementsEqual(q) { distance += 2 }
        return distance
    }
}
