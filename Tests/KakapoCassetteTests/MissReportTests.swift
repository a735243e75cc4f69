import KakapoCassette
import KakapoHTTP
import Testing

@Suite("Miss reports")
struct MissReportTests {
    static let cassette = Cassette(
        interactions: ["/users", "/users/1", "/users/42", "/orders/1?page=2"].map { target in
            Interaction(
                request: HTTP.Request(method: .get, target: target), response: HTTP.Response(status: 200),
                recordedAt: "", durationMilliseconds: 0)
        })

    @Test("ranks a recording with the same shape of path first and says what differed")
    func nearestPath() {
        let report = MissReport(
            request: HTTP.Request(method: .get, target: "/users/7"), cassette: Self.cassette, redactor: Redactor())
        #expect(report.nearest.map(\.url) == ["/users/1", "/users/42", "/users"])
        #expect(report.nearest[0].differences == ["path: /users/7 here, /users/1 recorded"])
    }

    @Test("names the query parameter and the method that differ")
    func queryAndMethod() {
        let report = MissReport(
            request: HTTP.Request(method: .post, target: "/orders/1?page=3&sort=asc"), cassette: Self.cassette,
            redactor: Redactor())
        #expect(report.nearest[0].url == "/orders/1?page=2")
        #expect(
            report.nearest[0].differences == [
                "method: POST here, GET recorded",
                "query parameter sort: present here, absent in the recording",
                "query parameter page: 3 here, 2 recorded",
            ])
    }

    @Test("never shows a secret from the request")
    func redactsSecrets() {
        let report = MissReport(
            request: HTTP.Request(method: .get, target: "/users/1?token=abc"), cassette: Self.cassette,
            redactor: Redactor())
        #expect(report.url == "/users/1?token=[REDACTED]")
    }
}
