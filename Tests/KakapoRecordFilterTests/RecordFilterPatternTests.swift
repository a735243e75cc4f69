import KakapoHTTP
import KakapoRecordFilter
import KakapoUpstream
import Testing

/// Record filters' patterns (`--record-only`, `--passthrough`): what they match, as upstreams read a path,
/// and what they refuse. A session that records honouring them is tested on the wire (KakapoProxyTests).
@Suite("Record filter patterns")
struct RecordFilterPatternTests {
    /// Whether `pattern` (as `--passthrough`) matches a forward-proxy request to `url`.
    static func matches(_ pattern: String, _ url: String) throws -> Bool {
        let filter = try RecordFilter(passthrough: [pattern])
        let (origin, target) = try #require(RequestOrigin.split(absoluteURL: url))
        return filter.passesThrough(HTTP.Request(method: .get, target: target, origin: origin), upstream: nil)
    }

    @Test("hosts: exact without regard to case, *.example.com for subdomains only, * for any; ports and schemes")
    func hosts() throws {
        #expect(try Self.matches("api.example.com", "https://API.example.com/v1/users?page=2"))
        #expect(try !Self.matches("api.example.com", "https://web.example.com/"))
        #expect(try Self.matches("*.example.com", "https://a.b.example.com/x"))
        #expect(try !Self.matches("*.example.com", "https://example.com/x"))
        #expect(try !Self.matches("*.example.com", "https://badexample.com/x"))
        #expect(try Self.matches("*", "http://anything.test:81/x"))
        #expect(try Self.matches("127.0.0.1:8081", "http://127.0.0.1:8081/x"))
        #expect(try !Self.matches("127.0.0.1:8081", "http://127.0.0.1:8082/x"))
        #expect(try Self.matches("api.example.com:443", "https://api.example.com/x"))
        #expect(try Self.matches("[::1]:8080/**", "http://[::1]:8080/x"))
        #expect(try Self.matches("https://api.example.com", "https://api.example.com/x"))
        #expect(try !Self.matches("https://api.example.com", "http://api.example.com/x"))
        #expect(try Self.matches("/health", "http://any.test/health"))
    }

    @Test("paths: * is one segment, ** any number (none too), the query is left out, escapes spelled as matching does")
    func paths() throws {
        #expect(try Self.matches("h.test/v1/**", "http://h.test/v1"))
        #expect(try Self.matches("h.test/v1/**", "http://h.test/v1/"))
        #expect(try Self.matches("h.test/v1/**", "http://h.test/v1/users/1?x=/v2"))
        #expect(try !Self.matches("h.test/v1/**", "http://h.test/v10/users"))
        #expect(try Self.matches("h.test/users/*", "http://h.test/users/7"))
        #expect(try !Self.matches("h.test/users/*", "http://h.test/users/7/posts"))
        #expect(try Self.matches("h.test/**/posts/*", "http://h.test/a/b/posts/3"))
        #expect(try Self.matches("h.test/a/**/b/**/c", "http://h.test/a/b/c"))
        #expect(try Self.matches("h.test/a/**/b/**/c", "http://h.test/a/x/b/b/y/c"))
        #expect(try !Self.matches("h.test/a/**/b/**/c", "http://h.test/a/c/b"))
        #expect(try Self.matches("h.test/health", "http://h.test/health?verbose=1"))
        #expect(try !Self.matches("h.test/health", "http://h.test/health/"))
        #expect(try Self.matches("h.test/~me/%41", "http://h.test/%7Eme/A"))
        #expect(try !Self.matches("h.test/a/b", "http://h.test/a%2Fb"))
    }

    @Test("paths are matched as libcurl sends them: up to ? or #, dot-segments resolved (RFC 3986 5.2.4)")
    func dotSegments() throws {
        #expect(try Self.matches("h.test/y/**", "http://h.test/x/../y/1"))
        #expect(try !Self.matches("h.test/x/**", "http://h.test/x/../y/1"))
        #expect(try Self.matches("h.test/x/y", "http://h.test/x/./y"))
        #expect(try Self.matches("h.test/x/", "http://h.test/x/a/.."))
        #expect(try !Self.matches("h.test/x", "http://h.test/x/a/.."))
        #expect(try Self.matches("h.test/", "http://h.test/x/.."))
        #expect(try Self.matches("h.test/x/y", "http://h.test/../../x/y"))
        #expect(try Self.matches("h.test/x/y", "http://h.test/x//../y"))
        #expect(try Self.matches("h.test/x/.../y", "http://h.test/x/.../y"))
        // libcurl leaves what follows `#` out of the URL it sends.
        #expect(try Self.matches("h.test/y/s", "http://h.test/y/s#/../../x/1"))
        #expect(try !Self.matches("h.test/x/**", "http://h.test/y/s#/../../x/1"))
        // `..` in the query is not a dot-segment.
        #expect(try Self.matches("h.test/y", "http://h.test/x/../y?a=/../x"))
        // The reverse mode's path prefix and the request's path are resolved together, as libcurl does.
        let filter = try RecordFilter(passthrough: ["h.test/v1/health"])
        let upstream = try #require(UpstreamURL("http://h.test/v1"))
        #expect(filter.passesThrough(HTTP.Request(method: .get, target: "/users/../health"), upstream: upstream))
    }

    @Test("dots spelled %2e (or a / spelled %2f, %5c, \\) go upstream as they are, and either reading may keep out")
    func encodedDots() throws {
        // Sent as /x/%2e%2e/y/1, which many servers read as /y/1.
        #expect(try Self.matches("h.test/y/**", "http://h.test/x/%2e%2e/y/1"))
        #expect(try Self.matches("h.test/x/**", "http://h.test/x/%2E%2E/y/1"))
        #expect(try Self.matches("h.test/y/**", "http://h.test/x/.%2e/y/1"))
        #expect(try Self.matches("h.test/y/**", "http://h.test/x/..%2fy/1"))
        #expect(try Self.matches("h.test/y/**", "http://h.test/x/..%5Cy/1"))
        #expect(try Self.matches("h.test/y/**", #"http://h.test/x/..\y/1"#))
        // A record-only request that may be read outside its pattern passes through.
        let filter = try RecordFilter(recordOnly: ["h.test/x/**"])
        #expect(
            filter.passesThrough(
                HTTP.Request(method: .get, target: "/x/%2e%2e/y"), upstream: UpstreamURL("http://h.test")))
        #expect(
            !filter.passesThrough(
                HTTP.Request(method: .get, target: "/x/%2e/y"), upstream: UpstreamURL("http://h.test")))
        // libcurl resolves the literal `..` first: /a/%2e%2e/../b goes as /a/b, with no dot-segment left.
        #expect(try Self.matches("h.test/a/b", "http://h.test/a/%2e%2e/../b"))
        #expect(try !Self.matches("h.test/b", "http://h.test/a/%2e%2e/../b"))
        // Without dot-segments an escaped / stays a character of its segment.
        #expect(try !Self.matches("h.test/a/b", "http://h.test/a%2Fb"))
    }

    @Test("paths are also matched as servers that merge slashes and drop ;parameters read them")
    func mergedSlashesAndParameters() throws {
        // nginx and Python's http.server read //live/x as /live/x; Tomcat and Jetty read /live;x/y as /live/y.
        #expect(try Self.matches("h.test/live/**", "http://h.test//live/x"))
        #expect(try Self.matches("h.test/live/**", "http://h.test/live//x"))
        #expect(try Self.matches("h.test/live/**", "http://h.test/live;x/y"))
        #expect(try Self.matches("h.test/live/**", "http://h.test/live;jsessionid=1;a=b/y;v=2"))
        // The variant: a parameter that leaves a dot-segment (Tomcat's /..;/) is resolved after it goes.
        #expect(try Self.matches("h.test/live/**", "http://h.test/public/..;/live/x"))
        #expect(try Self.matches("h.test/live/x", "http://h.test/live/x;"))
        // A trailing slash stays a segment, and an escaped ; is a character, not a parameter.
        #expect(try !Self.matches("h.test/live", "http://h.test//live/"))
        #expect(try !Self.matches("h.test/live/**", "http://h.test/live%3Bx/y"))
        // Record-only: any reading outside the list keeps the request out (the strict one of //v1/a is).
        let filter = try RecordFilter(recordOnly: ["h.test/v1/**"])
        for (target, out) in [("/v1/a", false), ("//v1/a", true), ("/v1;p/a", true), ("/v2//v1/a", true)] {
            #expect(
                filter.passesThrough(HTTP.Request(method: .get, target: target, origin: "http://h.test"), upstream: nil)
                    == out, "\(target)")
        }
    }

    @Test("dot-segments across a long path resolve in linear time")
    func dotSegmentsLinear() throws {
        // Sent as /a/%2e%2e/a/%2e%2e/.../a/b (each literal .. takes its b), read as /a/b.
        let filter = try RecordFilter(passthrough: ["h.test/a/b"])
        let path = "/" + Array(repeating: "a/%2e%2e/b/..", count: 20_000).joined(separator: "/") + "/a/b"
        let started = ContinuousClock.now
        let out = filter.passesThrough(HTTP.Request(method: .get, target: path, origin: "http://h.test"), upstream: nil)
        #expect(out)
        #expect(ContinuousClock.now - started < .seconds(2))
    }

    @Test("record-only keeps every other request out; passthrough wins over record-only")
    func lists() throws {
        let filter = try RecordFilter(recordOnly: ["api.example.com/v1/**"], passthrough: ["*/v1/health"])
        func out(_ url: String) throws -> Bool {
            let (origin, target) = try #require(RequestOrigin.split(absoluteURL: url))
            return filter.passesThrough(HTTP.Request(method: .get, target: target, origin: origin), upstream: nil)
        }
        #expect(try !out("https://api.example.com/v1/users"))
        #expect(try out("https://api.example.com/v2/users"))
        #expect(try out("https://cdn.example.com/v1/users"))
        #expect(try out("https://api.example.com/v1/health"))
        #expect(
            !RecordFilter().passesThrough(
                HTTP.Request(method: .get, target: "/", origin: "http://a.test"), upstream: nil))
    }

    @Test("in reverse mode the upstream's host is matched, and its path prefix comes before the request's path")
    func reverse() throws {
        let filter = try RecordFilter(recordOnly: ["api.example.com/v1/users/**"])
        let upstream = try #require(UpstreamURL("https://API.example.com/v1"))
        #expect(!filter.passesThrough(HTTP.Request(method: .get, target: "/users/1"), upstream: upstream))
        #expect(filter.passesThrough(HTTP.Request(method: .get, target: "/orders/1"), upstream: upstream))
        // No upstream and no origin: it goes nowhere, so nothing to pass through.
        #expect(!filter.passesThrough(HTTP.Request(method: .get, target: "/orders/1"), upstream: nil))
    }

    @Test(
        "refuses what is not a pattern, saying why",
        arguments: [
            "", "api.example.com?x=1", "api example.com", "ftp://api.example.com", "api.*.com", "**.example.com",
            "api.example.com:0", "api.example.com:99999", "api.example.com:http", "user@api.example.com",
            "h.test/v*/users", "h.test/a**", "é.example.com", String(repeating: "a", count: 2049),
            "h.test" + String(repeating: "/a", count: 65), "://", "*.", "h.test/x/../y", "h.test/./y", "/%2e%2E/**",
        ])
    func refuses(_ pattern: String) {
        #expect(throws: RecordFilter.PatternError.self) { try RecordFilter.Pattern(pattern) }
    }

    @Test("too many patterns are refused")
    func tooMany() {
        #expect(throws: RecordFilter.PatternError.self) {
            try RecordFilter(recordOnly: Array(repeating: "a.test", count: RecordFilter.patternLimit + 1))
        }
    }

    @Test("a long path against many ** stays fast (no backtracking blow-up)")
    func linear() throws {
        let pattern = "h.test/" + Array(repeating: "**/a", count: 30).joined(separator: "/") + "/**/b/**"
        let filter = try RecordFilter(passthrough: [pattern])
        let path = "/" + Array(repeating: "a", count: 20_000).joined(separator: "/")
        let request = HTTP.Request(method: .get, target: path, origin: "http://h.test")
        let started = ContinuousClock.now
        #expect(!filter.passesThrough(request, upstream: nil))
        #expect(ContinuousClock.now - started < .seconds(2))
    }
}
