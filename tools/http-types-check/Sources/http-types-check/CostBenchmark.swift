import HTTPTypes
import KakapoHTTP
import NIOHTTP1
import NIOHTTPTypesHTTP1

/// Nanoseconds per request head for each conversion a proxy makes, in a plain timed loop: the best of
/// `runs` runs of `iterations` conversions each (the best run is the one least disturbed by other work).
struct CostBenchmark {
    var iterations = 200_000
    var runs = 7

    /// A typical request head of eight fields, as a parser hands it over.
    static let pairs: [(String, String)] = [
        ("Host", "api.example.com"),
        ("User-Agent", "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36"),
        ("Accept", "application/json, text/plain, */*"),
        ("Accept-Encoding", "gzip, deflate, br, zstd"),
        ("Accept-Language", "en-GB,en;q=0.9"),
        ("Authorization", "Bearer eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N"),
        ("Cookie", "session=4f2a9c1e7b; theme=dark"),
        ("X-Request-ID", "7d0f3c52-9a8e-4f61-b2d4-1c5e8a9f0b37"),
    ]

    /// Each case: a name and a body that converts once and returns something derived from the result.
    func cases() -> [(String, () -> Int)] {
        let pairs = Self.pairs
        let nio = HTTPHeaders(pairs)
        let head = HTTPRequestHead(version: .http1_1, method: .GET, uri: "/v1/users/42?expand=teams", headers: nio)
        let kakapo = HTTP.Headers(pairs)
        let fields = Self.httpFields(pairs)
        return [
            ("[(String, String)] -> HTTP.Headers", { HTTP.Headers(opaque(pairs)).count }),
            ("[(String, String)] -> HTTPFields", { Self.httpFields(opaque(pairs)).count }),
            (
                "  of which 8 x HTTPField.Name(String)",
                { pairs.reduce(0) { $0 + (HTTPField.Name(opaque($1.0)) == nil ? 0 : 1) } }
            ),
            (
                "NIOHTTP1.HTTPHeaders -> HTTP.Headers",
                { HTTP.Headers(opaque(nio).map { HTTP.Headers.Field(name: $0.name, value: $0.value) }).count }
            ),
            ("NIOHTTP1.HTTPHeaders -> HTTPFields", { HTTPFields(opaque(nio), splitCookie: false).count }),
            (
                "HTTPRequestHead -> HTTP.Request (Kakapo's server)",
                {
                    let head = opaque(head)
                    let headers = HTTP.Headers(head.headers.map { HTTP.Headers.Field(name: $0.name, value: $0.value) })
                    let request = HTTP.Request(method: HTTP.Method(head.method.rawValue), target: head.uri, headers: headers)
                    return request.headers.count + request.target.utf8.count
                }
            ),
            (
                "HTTPRequestHead -> HTTPRequest (Hummingbird 2)",
                {
                    let request = try! HTTPRequest(opaque(head), secure: false, splitCookie: false)
                    return request.headerFields.count + (request.path?.utf8.count ?? 0)
                }
            ),
            ("HTTP.Headers -> NIOHTTP1.HTTPHeaders", { HTTPHeaders(opaque(kakapo).map { ($0.name, $0.value) }).count }),
            ("HTTPFields -> NIOHTTP1.HTTPHeaders", { HTTPHeaders(opaque(fields)).count }),
            ("HTTP.Headers lookup (\"authorization\")", { opaque(kakapo)["authorization"]?.utf8.count ?? 0 }),
            ("HTTPFields lookup (.authorization)", { opaque(fields)[.authorization]?.utf8.count ?? 0 }),
        ]
    }

    static func httpFields(_ pairs: [(String, String)]) -> HTTPFields {
        var fields = HTTPFields()
        fields.reserveCapacity(pairs.count)
        for (name, value) in pairs {
            guard let name = HTTPField.Name(name) else { continue }
            fields.append(HTTPField(name: name, value: value))
        }
        return fields
    }

    /// The best nanoseconds per call of `body`.
    func measure(_ body: () -> Int) -> Double {
        var best = Double.infinity
        var sink = 0
        for _ in 0..<runs {
            let start = ContinuousClock.now
            for _ in 0..<iterations { sink &+= body() }
            let elapsed = ContinuousClock.now - start
            let nanoseconds = Double(elapsed.components.seconds) * 1e9 + Double(elapsed.components.attoseconds) / 1e9
            best = min(best, nanoseconds / Double(iterations))
        }
        blackHole(sink)
        return best
    }
}

/// Hides a value from the optimizer, so a conversion of a constant input is not hoisted out of the loop.
@inline(never)
func opaque<T>(_ value: T) -> T { value }

@inline(never)
func blackHole(_ value: Int) {
    if value == 0x5EED_5EED { print("") }
}
