import Foundation
import Kakapo
import KakapoTestSupport
import Testing

/// `kakapo cassette check FILE --openapi SPEC`, run as a user runs it.
@Suite("Command line: OpenAPI check")
struct SpecCheckCommandTests {
    static let fixtures = CLITests.packageRoot + "/Tests/KakapoOpenAPITests/Fixtures"

    @Test("exit 0 when every interaction is allowed, 1 with each problem listed when not")
    func exitCodes() async throws {
        let spec = Self.fixtures + "/users.openapi.yaml"
        let clean = try await KakapoProcess.run([
            "cassette", "check", Self.fixtures + "/conforming.cassette.json", "--openapi", spec,
        ])
        #expect(clean.status == 0, "\(clean.error)")
        #expect(clean.output.hasSuffix("(OpenAPI 3.0.3): 6 allowed, 0 not allowed\n"), "\(clean.output)")

        let broken = try await KakapoProcess.run([
            "cassette", "check", Self.fixtures + "/violations.cassette.json", "--openapi", spec,
        ])
        #expect(broken.status == 1, "\(broken.error)")
        #expect(
            broken.output.contains(
                "#6 GET /v1/users/2 -> 200 (GET /users/{id})\n    response body: missing the required property \"name\"\n"
            ))
        #expect(broken.output.contains("#9 GET /v1/orders -> 200\n    no path in the spec matches /v1/orders\n"))
        #expect(
            broken.output.hasSuffix(
                "15 interactions checked against \(spec) (OpenAPI 3.0.3): 6 allowed, 9 not allowed (13 problems)\n"),
            "\(broken.output)")
        #expect(!broken.output.contains("#0 "))
    }

    @Test("one interaction is counted in the singular; a path without the server prefix is not in the spec")
    func singularAndServerPrefix() async throws {
        let directory = try Fixtures.temporaryDirectory()
        let cassette = directory + "/one.json"
        try """
        {"version": 1, "interactions": [{
          "request": {"method": "GET", "url": "/users/2", "headers": []},
          "response": {"status": 404, "headers": [["Content-Type", "application/json"]],
                       "body": {"json": {"error": "no such user"}}},
          "recordedAt": "2026-11-22T09:00:00.000Z", "durationMs": 1}]}
        """.write(toFile: cassette, atomically: true, encoding: .utf8)
        let spec = Self.fixtures + "/users.openapi.yaml"
        let result = try await KakapoProcess.run(["cassette", "check", cassette, "--openapi", spec])
        #expect(result.status == 1, "\(result.error)")
        #expect(
            result.output == """
                #0 GET /users/2 -> 404
                    /users/2 is not in the spec: it lacks the server prefix /v1 (/v1/users/2 would match)
                1 interaction checked against \(spec) (OpenAPI 3.0.3): 0 allowed, 1 not allowed (1 problem)

                """)
    }

    @Test("--format json lists every interaction with its problems")
    func json() async throws {
        let result = try await KakapoProcess.run([
            "cassette", "check", Self.fixtures + "/violations.cassette.json", "--openapi",
            Self.fixtures + "/pets.openapi.json",
            "--format", "json",
        ])
        #expect(result.status == 1)
        let report = try JSONParser.parse(Array(result.output.utf8))
        #expect(report["openapiVersion"] == "3.1.0")
        #expect(report["interactions"]?.arrayValue?.count == 15)
        #expect(report["allowed"] == 0)
        #expect(
            report["interactions"]?.arrayValue?.first?["problems"]?.arrayValue?.first
                == "no path in the spec matches /v1/users")
    }

    @Test("an unreadable spec or cassette exits 3 naming the file")
    func unreadable() async throws {
        let missingSpec = try await KakapoProcess.run([
            "cassette", "check", Self.fixtures + "/conforming.cassette.json", "--openapi", Self.fixtures + "/none.yaml",
        ])
        #expect(missingSpec.status == 3)
        #expect(missingSpec.error.contains("none.yaml: cannot read the file"), "\(missingSpec.error)")
        let notCassette = try await KakapoProcess.run([
            "cassette", "check", Self.fixtures + "/users.openapi.yaml", "--openapi",
            Self.fixtures + "/users.openapi.yaml",
        ])
        #expect(notCassette.status == 3)
        #expect(notCassette.error.contains("users.openapi.yaml"), "\(notCassette.error)")
    }
}
