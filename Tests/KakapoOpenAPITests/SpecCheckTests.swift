import Foundation
import KakapoCassette
import KakapoHTTP
import KakapoJSON
import Testing

@testable import KakapoOpenAPI

/// Cassettes checked against OpenAPI descriptions: a 3.0 YAML spec and a 3.1 JSON spec, with an
/// interaction for each kind of violation and the exact report it must produce.
@Suite("OpenAPI cassette checks")
struct SpecCheckTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")
        .path

    static func check(_ cassette: String, against spec: String) throws -> [SpecFinding] {
        let spec = try OpenAPISpec.load(fixtures + "/" + spec)
        return CassetteSpecChecker(spec: spec).check(try CassetteFile.load(fixtures + "/" + cassette))
    }

    @Test("a cassette that follows the 3.0 spec has nothing to report, including readOnly ids left out of a POST")
    func conforming() throws {
        let findings = try Self.check("conforming.cassette.json", against: "users.openapi.yaml")
        #expect(findings.count == 6)
        for finding in findings { #expect(finding.problems.isEmpty, "\(finding.text)") }
        #expect(
            findings.map(\.operation) == [
                "GET /users", "GET /users/{id}", "GET /users/me", "POST /users", "GET /users/{id}", "PUT /users/{id}",
            ])
    }

    @Test("every kind of violation is reported, with the JSON pointer for bodies")
    func violations() throws {
        let findings = try Self.check("violations.cassette.json", against: "users.openapi.yaml")
        let reported = Dictionary(
            uniqueKeysWithValues: findings.filter { !$0.problems.isEmpty }.map { ($0.position, $0.problems) })
        #expect(reported.keys.sorted() == Array(6...14))
        #expect(
            reported[6] == [
                #"response body: missing the required property "name""#,
                "response body /email: expected a string, got 42",
            ])
        #expect(reported[7] == ["status 418 is not declared for GET /users/{id} (it declares 200, 404)"])
        #expect(reported[8] == ["the spec has no DELETE for /users/{id} (it has GET, PUT)"])
        #expect(reported[9] == ["no path in the spec matches /v1/orders"])
        #expect(reported[10] == ["request body /name: expected a string, got 5"])
        #expect(reported[11] == [#"path parameter "id": expected an integer, got "abc""#])
        #expect(reported[12] == [#"query parameter "limit": 1000 is above the maximum 100"#])
        #expect(reported[13] == ["the response Content-Type text/html is not one the spec declares (application/json)"])
        #expect(
            reported[14] == [
                "response body /password: not a property the schema allows",
                #"response body /role: "owner" is not one of "admin", "member""#,
                #"response body /createdAt: "yesterday" is not a valid date-time"#,
                "response body /tags/1: repeats an earlier item",
            ])
        #expect(findings[8].operation == nil)
        #expect(
            findings[14].text.hasPrefix("#14 GET /v1/users/4 -> 200 (GET /users/{id})\n    response body /password"))
    }

    static func exchange(
        _ method: HTTP.Method, _ target: String, headers: HTTP.Headers = ["X-Tenant": "t1"], status: Int = 200,
        type: String = "application/vnd.pets+json", body: JSONValue
    ) -> Interaction {
        Interaction(
            request: HTTP.Request(method: method, target: target, headers: headers),
            response: HTTP.Response(
                status: status, headers: ["Content-Type": type], body: JSONWriter().write(body)),
            recordedAt: "2026-11-22T09:00:00.000Z", durationMilliseconds: 1)
    }

    @Test(
        "3.1: oneOf chosen by discriminator, const, type lists with null, exclusive bounds, multipleOf, formats, 2XX, headers"
    )
    func openAPI31() throws {
        let spec = try OpenAPISpec.load(Self.fixtures + "/pets.openapi.json")
        #expect(spec.declaredVersion == "3.1.0")
        let checker = CassetteSpecChecker(spec: spec)
        let uuid = "/pets/0b6c3d6e-8d1e-4b0c-9f1a-2d3c4b5a6978"
        let cassette = Cassette(interactions: [
            Self.exchange(.get, uuid, body: ["petType": "cat", "name": "Tom", "nickname": nil, "lives": 9]),
            Self.exchange(.get, uuid, status: 203, body: ["petType": "dog", "name": "Rex", "weight": 12.5]),
            Self.exchange(.get, uuid, body: ["petType": "cat", "name": "Tom", "nickname": 3, "lives": 12]),
            Self.exchange(.get, uuid, body: ["petType": "dog", "name": "Rex", "weight": 0.3]),
            Self.exchange(.get, uuid, body: ["petType": "cow", "name": "Daisy"]),
            Self.exchange(.get, "/pets/42", headers: [:], body: ["petType": "dog", "name": "Rex"]),
            Self.exchange(
                .get, "/pets", type: "application/json", body: [["petType": "dog", "name": "Rex", "weight": 0]]),
        ])
        let problems = checker.check(cassette).map(\.problems)
        #expect(problems[0] == [])
        #expect(problems[1] == [])
        #expect(
            problems[2] == [
                "response body /nickname: expected a string, got 3", "response body /lives: 12 is above the maximum 9",
            ])
        #expect(problems[3] == ["response body /weight: 0.3 is not a multiple of 0.5"])
        // An unknown discriminator value is named as such, with the values the discriminator knows.
        #expect(problems[4] == [#"response body: discriminator petType: "cow" is none of cat, dog"#])
        #expect(
            problems[5] == [
                #"missing the required header parameter "X-Tenant""#,
                #"path parameter "petId": "42" is not a valid uuid"#,
            ])
        #expect(problems[6] == ["response body /0/weight: 0 is not above the minimum 0"])
    }

    @Test("bodies in other media types are matched by family, unparseable JSON is reported, HEAD falls back to GET")
    func mediaTypes() throws {
        let spec = try OpenAPISpec.load(Self.fixtures + "/users.openapi.yaml")
        let checker = CassetteSpecChecker(spec: spec)
        var broken = Self.exchange(.get, "/v1/users/1", headers: [:], type: "application/json", body: [:])
        broken.response.body = Array(#"{"id": 1,"#.utf8)
        #expect(
            checker.check(broken, position: 0).problems.first?.hasPrefix("the response body is not valid JSON") == true)
        var head = Self.exchange(.head, "/v1/users/1", headers: [:], type: "application/json", body: [:])
        head.response.body = []
        #expect(checker.check(head, position: 0).problems == [])
        #expect(checker.check(head, position: 0).operation == "HEAD /users/{id}")
        let unexpected = Interaction(
            request: HTTP.Request(
                method: .put, target: "/v1/users/1", headers: ["Content-Type": "application/json"],
                body: Array(#"{"id": 1, "name": "Ada", "email": "ada@example.com"}"#.utf8)),
            response: HTTP.Response(status: 200, headers: ["Content-Type": "text/plain"], body: Array("ok".utf8)),
            recordedAt: "2026-11-22T09:00:00.000Z", durationMilliseconds: 1)
        // `default` declares no content: a body is not what the spec allows.
        #expect(
            checker.check(unexpected, position: 0).problems == [
                "the response has a 2-byte body but the spec declares no content for default"
            ])
        var missingBody = unexpected
        missingBody.request = HTTP.Request(method: .post, target: "/v1/users")
        missingBody.response = HTTP.Response(
            status: 400, headers: ["Content-Type": "application/json"], body: Array(#"{"error": "empty"}"#.utf8))
        #expect(checker.check(missingBody, position: 0).problems == ["missing the required request body"])
    }

    @Test("path templates: literal segments win, several variables in one segment, server prefixes are required")
    func templates() throws {
        let spec = try OpenAPISpec.load(Self.fixtures + "/users.openapi.yaml")
        #expect(spec.serverPrefixes == ["/v1"])
        #expect(spec.matches(path: "/v1/users/me").first?.template.text == "/users/me")
        #expect(spec.matches(path: "/v1/users/7").first?.parameters == ["id": "7"])
        // Every server has the /v1 prefix: a path without it is not one of the spec's.
        #expect(spec.matches(path: "/users/7").isEmpty)
        #expect(spec.missingPrefixes(of: "/users/7") == ["/v1"])
        #expect(spec.missingPrefixes(of: "/nowhere") == [])
        #expect(
            CassetteSpecChecker(spec: spec).check(
                Self.exchange(.get, "/users/7", headers: [:], type: "application/json", body: ["id": 7, "name": "A"]),
                position: 0
            ).problems == ["/users/7 is not in the spec: it lacks the server prefix /v1 (/v1/users/7 would match)"])
        #expect(spec.matches(path: "/v1/users/7/extra").isEmpty)
        let files = PathTemplate(.init(rawValue: "/files/{name}.{ext}"))
        #expect(files.match("/files/report.final.pdf") == ["name": "report", "ext": "final.pdf"])
        #expect(files.match("/files/report") == nil)
        #expect(PathTemplate(.init(rawValue: "/a/{x}")).match("/a/caf%C3%A9") == ["x": "café"])
    }

    @Test("a spec with no servers, or one server without a path, takes paths as they are")
    func unprefixedServers() throws {
        func spec(_ servers: String) throws -> OpenAPISpec {
            try OpenAPISpec.decode(
                Data(
                    """
                    openapi: 3.1.0
                    info: {title: t, version: '1'}
                    \(servers)
                    paths:
                      /pets/{id}:
                        get:
                          responses: {'200': {description: ok}}
                    """.utf8), yaml: true, file: "inline.yaml")
        }
        #expect(try spec("").matches(path: "/pets/1").first?.parameters == ["id": "1"])
        let mixed = try spec("servers: [{url: 'https://a.example.com/v1'}, {url: 'https://b.example.com'}]")
        #expect(mixed.matches(path: "/pets/1").first?.parameters == ["id": "1"])
        #expect(mixed.matches(path: "/v1/pets/1").first?.parameters == ["id": "1"])
        #expect(mixed.missingPrefixes(of: "/pets/1") == [])
        let two = try spec("servers: [{url: 'https://a.example.com/v1'}, {url: /v2/}]")
        #expect(two.matches(path: "/pets/1").isEmpty)
        #expect(two.missingPrefixes(of: "/pets/1") == ["/v1", "/v2"])
    }

    @Test("unusable specs are clear errors naming the file")
    func unusableSpecs() throws {
        let directory = NSTemporaryDirectory() + "kakapo-openapi-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        func error(_ name: String, _ text: String) -> String {
            let file = directory + "/" + name
            try? text.write(toFile: file, atomically: true, encoding: .utf8)
            do {
                _ = try OpenAPISpec.load(file)
                return "loaded"
            } catch {
                return error.description
            }
        }
        #expect(
            error("swagger.json", #"{"swagger": "2.0", "paths": {}}"#).hasSuffix(
                "swagger.json: Swagger 2.0 is not supported; convert it to OpenAPI 3 first"))
        #expect(
            error("plain.yaml", "title: not a spec\n").hasSuffix(
                "no `openapi` version field; is this an OpenAPI document?"))
        #expect(
            error("broken.json", "{\"openapi\": \"3.1.0\",\n  \"paths\": {]\n}").contains(
                "broken.json:2:13: not valid JSON: unexpected"))
        #expect(
            error("future.yaml", "openapi: 4.0.0\n").hasSuffix("OpenAPI 4.0.0 is not supported (3.0, 3.1 and 3.2 are)"))
        let typed = error(
            "typed.yaml",
            "openapi: 3.0.3\ninfo: {title: t, version: '1'}\npaths:\n  /a:\n    get:\n      responses: 7\n")
        #expect(typed.contains("typed.yaml: "), "\(typed)")
        #expect(typed.contains("/a"), "\(typed)")
        #expect(error("missing.yaml", "").contains("missing.yaml"))
        #expect(
            error("syntax.yaml", "openapi: 3.0.3\npaths: [\n  /a: {\n").contains("syntax.yaml: not valid YAML: 4:1"))
    }
}
