import KakapoCassette
import KakapoHTTP
import Testing

/// The first look of a GraphQL miss, which searches each recording for the operation's name, against names
/// a client makes up: its time does not grow with the name.
@Suite("Miss reports of GraphQL operations")
struct GraphQLMissReportTests {
    /// 50 GraphQL recordings whose variables hold 63 KB of `a`: the worst text for a name like `aaa…ab`.
    static let cassette = Cassette(
        interactions: (0..<50).map { index in
            let filler = String(repeating: "a", count: 63_000)
            let body =
                #"{"query":"query GetUser { user { id } }","operationName":"GetUser","variables":{"v":"\#(filler)"}}"#
            return Interaction(
                request: HTTP.Request(
                    method: .post, target: "/graphql", headers: ["Content-Type": "application/json"],
                    body: Array(body.utf8)),
                response: HTTP.Response(status: 200), recordedAt: "", durationMilliseconds: 0)
        })

    static func request(named name: String) -> HTTP.Request {
        let body = #"{"query":"query \#(name) { user { id } }","operationName":"\#(name)"}"#
        return HTTP.Request(
            method: .post, target: "/graphql", headers: ["Content-Type": "application/json"], body: Array(body.utf8))
    }

    @Test("a 3,000-byte made-up operation name is reported on at once (it took minutes: name × body per recording)")
    func longName() {
        let started = ContinuousClock.now
        let report = MissReport(
            request: Self.request(named: String(repeating: "a", count: 3_000) + "b"), cassette: Self.cassette,
            redactor: Redactor())
        #expect(report.nearest.count == 3)
        #expect(ContinuousClock.now - started < .seconds(20))
    }

    @Test("recordings of the request's own operation are nearest; a name inside a longer word does not count")
    func ownOperationFirst() {
        var interactions = Self.cassette.interactions.prefix(2).map { $0 }
        let other = #"{"query":"query GetUserX { user { id } }","operationName":"GetUserX"}"#
        interactions.insert(
            Interaction(
                request: HTTP.Request(
                    method: .post, target: "/graphql", headers: ["Content-Type": "application/json"],
                    body: Array(other.utf8)),
                response: HTTP.Response(status: 200), recordedAt: "", durationMilliseconds: 0), at: 0)
        let report = MissReport(
            request: Self.request(named: "GetUser"), cassette: Cassette(interactions: interactions),
            redactor: Redactor())
        #expect(report.nearest.map(\.position) == [1, 2, 0], "\(report.nearest.map(\.differences))")
    }
}
