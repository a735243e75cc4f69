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
    }

    public let method: String
    public let url: String
    public let nearest: [Candidate]

    /// Ranks every recorded interaction against `request` and keeps the closest `limit`.
    public init(
        request: HTTPRequest, cassette: Cassette, redactor: Redactor, matching: MatchOptions = MatchOptions(),
        limit: Int = 3
    ) {
        self.method = request.method.rawValue
        self.url = redactor.redactedURL(of: request)
        let key = RequestKey(request, redactor: redactor, matching: matching)
        let body =
            matching.matchBody
            ? ComparableBody(request.body, headers: request.headers, redactor: redactor, matching: matching) : .empty
        var scored: [(score: Int, candidate: Candidate)] = []
        for (position, interaction) in cassette.interactions.enumerated() {
            let recorded = RequestKey(interaction.request, redactor: redactor, matching: matching)
            var differences: [String] = []
            var score = 0
            if let origin = request.origin, let recordedOrigin = interaction.request.origin, origin != recordedOrigin {
                differences.append("host: \(origin) here, \(recordedOrigin) recorded")
                score += 16
            }
            if recorded.method != key.method {
                differences.append("method: \(key.method) here, \(recorded.method) recorded")
                score += 4
            }
            if recorded.path != key.path {
                differences.append("path: \(key.path) here, \(recorded.path) recorded")
                score += 8 + MissReport.distance(recorded.path, key.path)
            }
            let here = Set(key.query.map(\.name))
            let there = Set(recorded.query.map(\.name))
            for name in here.subtracting(there).sorted() {
                differences.append("query parameter \(name): present here, absent in the recording")
                score += 2
            }
            for name in there.subtracting(here).sorted() {
                differences.append("query parameter \(name): absent here, present in the recording")
                score += 2
            }
            for name in here.intersection(there).sorted() {
                let a = key.query.filter { $0.name == name }.map { $0.value ?? "" }
                let b = recorded.query.filter { $0.name == name }.map { $0.value ?? "" }
                if a != b {
                    differences.append(
                        "query parameter \(name): \(a.joined(separator: ",")) here, \(b.joined(separator: ",")) recorded"
                    )
                    score += 1
                }
            }
            for (name, pair) in zip(matching.matchedHeaders, zip(key.headers, recorded.headers)) where pair.0 != pair.1
            {
                differences.append("header \(name): \"\(pair.0)\" here, \"\(pair.1)\" recorded")
                score += 1
            }
            if matching.matchBody {
                let recordedBody = ComparableBody(
                    interaction.request.body, headers: interaction.request.headers, redactor: redactor,
                    matching: matching)
                let redacted = recordedBody.redactedPlaces
                let bodyDifferences = recordedBody.removing(redacted).differences(from: body.removing(redacted))
                differences += bodyDifferences
                score += min(bodyDifferences.count, 1)
            }
            if differences.isEmpty {
                differences.append("matched, but every recording of this request was already played")
            }
            scored.append(
                (
                    score,
                    Candidate(
                        position: position, method: recorded.method,
                        url: redactor.redactedURL(of: interaction.request), differences: differences)
                ))
        }
        scored.sort { $0.score != $1.score ? $0.score < $1.score : $0.candidate.position < $1.candidate.position }
        self.nearest = scored.prefix(limit).map(\.candidate)
    }

    /// The report as the JSON body of a miss response.
    public var json: JSONValue {
        .object([
            "error": "no recorded interaction matches this request",
            "request": .object(["method": .string(method), "url": .string(url)]),
            "nearest": .array(
                nearest.map { candidate in
                    .object([
                        "interaction": .number(JSONNumber(candidate.position)),
                        "method": .string(candidate.method),
                        "url": .string(candidate.url),
                        "differences": .array(candidate.differences.map { .string($0) }),
                    ])
                }),
        ])
    }

    /// A crude edit distance between paths, by differing segments, so `/users/2` ranks near `/users/1`.
    static func distance(_ a: String, _ b: String) -> Int {
        let x = a.split(separator: "/")
        let y = b.split(separator: "/")
        // A missing or extra segment counts more than a changed one: `/users/7` is nearer `/users/1`
        // than `/users`.
        var distance = 3 * abs(x.count - y.count)
        for (p, q) in zip(x, y) where p != q { distance += 2 }
        return distance
    }
}
