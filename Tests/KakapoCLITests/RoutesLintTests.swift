import Foundation
import Kakapo
import KakapoTestSupport
import Testing

/// `kakapo routes lint` lists every error of a file, each with its line, column and key path.
@Suite("Command line: routes lint")
struct RoutesLintTests {
    static var hasCurl: Bool { FileManager.default.isExecutableFile(atPath: "/usr/bin/curl") }

    static func write(_ text: String, name: String) throws -> String {
        let file = try Fixtures.temporaryDirectory() + "/" + name
        try text.write(toFile: file, atomically: true, encoding: .utf8)
        return file
    }

    @Test("every error of a file is listed with its line, column and key path, not just the first")
    func everyError() async throws {
        let file = try Self.write(
            """
            routes:
              - path: /a
                latency: soon
                response: {}
              - path: /ok
                response: {status: 204}
              - method: GET
                path: /a/:id
                response:
                  json: {x: "{{params.nope}}"}
              - path: /reset
                fault: connection-reset
              - path: /half
                fault: {status: 503, rate: 0.5}
            resources:
              - path: /todos/:id

            """, name: "routes.yaml")
        let result = try await KakapoProcess.run(["routes", "lint", file])
        #expect(result.status == 3)
        let lines = result.error.split(separator: "\n").map(String.init)
        #expect(lines.contains { $0.hasPrefix("\(file):3:14: routes[0].latency: expected a duration") }, "\(lines)")
        #expect(
            lines.contains(
                "\(file):10:13: routes[2].response.json: {{params.nope}}: route GET /a/:id has parameters: id"),
            "\(lines)")
        #expect(
            lines.contains {
                $0.hasPrefix(
                    "\(file):13:5: routes[4]: a route whose fault strikes only part of the calls needs a response")
            }, "\(lines)")
        #expect(lines.contains { $0.hasPrefix("\(file):16:11: resources[0].path: a resource path is a plain path") })
        #expect(lines.contains("\(file): 4 errors"), "\(lines)")
        #expect(!result.error.contains("routes[3]"), "a route with only a connection fault is valid")
    }

    @Test("past 100 errors, lint says how many more there are")
    func manyErrors() async throws {
        let routes = (0..<105).map { #"{"path": "/r\#($0)", "response": {"status": 1000}}"# }
        let file = try Self.write(#"{"routes": [\#n"# + routes.joined(separator: ",\n") + "\n]}", name: "routes.json")
        let result = try await KakapoProcess.run(["routes", "lint", file])
        #expect(result.status == 3)
        let lines = result.error.split(separator: "\n").map(String.init)
        #expect(lines.filter { $0.contains("expected an integer from 100 to 599") }.count == 100)
        #expect(lines.contains { $0.hasPrefix("\(file):101:") && $0.contains("routes[99].response.status") })
        #expect(lines.contains("\(file): and 5 more errors"), "\(lines)")
        #expect(lines.contains("\(file): 105 errors"))
    }

    @Test("a YAML syntax error is reported where the unfinished value starts, not at the end of the file")
    func yamlSyntax() async throws {
        let file = try Self.write("routes:\n  - path: [unclosed\n  - path: /b\n    response: {}\n", name: "routes.yaml")
        let result = try await KakapoProcess.run(["routes", "lint", file])
        #expect(result.status == 3)
        #expect(result.error.contains("\(file):2:11: invalid YAML: "), "\(result.error)")
    }

    @Test(
        "a route with only a connection fault is valid, and resets the connection",
        .enabled(if: RoutesLintTests.hasCurl))
    func faultOnly() async throws {
        let file = try Self.write(
            "routes:\n  - path: /reset\n    fault: connection-reset\n  - path: /down\n    fault: {status: 503}\n",
            name: "routes.yaml")
        let lint = try await KakapoProcess.run(["routes", "lint", file])
        #expect(lint.status == 0, "\(lint.error)")
        #expect(lint.output.contains("routes.yaml: 2 routes, 0 resources"))
        let process = try KakapoProcess(["serve", "--routes", file, "--port", "0"])
        let port = try await process.waitUntilListening()
        let reset = try await KakapoProcess.run(
            ["--silent", "--max-time", "10", "http://127.0.0.1:\(port)/reset"], executable: "/usr/bin/curl")
        #expect(reset.status != 0, "curl gets no answer")
        let down = try await KakapoProcess.run(
            [
                "--silent", "--max-time", "10", "--write-out", "%{http_code}", "--output", "/dev/null",
                "http://127.0.0.1:\(port)/down",
            ], executable: "/usr/bin/curl")
        #expect(down.output == "503")
        process.send(SIGTERM)
        #expect(try await process.waitForExit() == 0)
    }
}
