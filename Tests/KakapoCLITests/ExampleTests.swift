import Foundation
import Kakapo
import KakapoTestSupport
import Testing

/// The example executable the README shows, run as a process.
@Suite("Example server")
struct ExampleTests {
    @Test("overrides two endpoints with the Store and replays the rest of the demo cassette")
    func example() async throws {
        let process = try KakapoProcess(
            ["0", CLITests.demoCassette], executable: KakapoProcess.builtProduct("kakapo-example"))
        let client = try TestClient(port: try await process.waitUntilListening())
        let user = try await client.send(.get, "/users/3")
        #expect(user.text == #"{"id":"3","name":"User 3"}"#)
        #expect(user.headers["X-Kakapo-Source"] == "route")
        let created = try await client.send(.post, "/users", body: Array(#"{"name":"Ada"}"#.utf8))
        #expect(created.status == 201 && created.text == #"{"id":"20","name":"Ada"}"#)
        #expect(try await client.send(.get, "/users/20").text == #"{"id":"20","name":"Ada"}"#)
        let list = try await client.send(.get, "/users")
        #expect(list.headers["X-Kakapo-Source"] == "cassette")
        #expect(list.text.contains("Grace Hopper"))
        client.shutdown()
        process.send(SIGTERM)
        _ = try await process.waitForExit()
    }
}

/// The README's quick start, run as written: its commands, its curl calls and the output it shows.
@Suite("README quick start")
struct ReadmeQuickStartTests {
    static func quickStart() throws -> [String] {
        let readme = try String(contentsOfFile: CLITests.packageRoot + "/README.md", encoding: .utf8)
        let start = try #require(readme.range(of: "\n## Quick start\n"))
        let rest = readme[start.upperBound...]
        let section = rest.range(of: "\n## ").map { rest[..<$0.lowerBound] } ?? rest
        // The fenced blocks, in order, without their fences.
        return section.components(separatedBy: "```").enumerated().filter { $0.offset % 2 == 1 }.map { block in
            String(block.element.drop(while: { $0 != "\n" }).dropFirst())
        }
    }

    @Test("keeps the two commands, byte for byte, and the scripts they run exist")
    func commands() throws {
        let blocks = try Self.quickStart()
        try #require(blocks.count >= 4, "\(blocks)")
        #expect(blocks[0] == "tools/setup.sh && swift run kakapo replay --cassette cassettes/demo.json --port 8080\n")
        #expect(blocks[1] == "tools/test.sh\n")
        for script in ["tools/setup.sh", "tools/test.sh"] {
            #expect(FileManager.default.isExecutableFile(atPath: CLITests.packageRoot + "/" + script), "\(script)")
        }
    }

    @Test("replays the demo cassette and answers the curl calls with the output it shows")
    func transcript() async throws {
        let blocks = try Self.quickStart()
        try #require(blocks.count >= 4, "\(blocks)")
        let command = try #require(blocks[0].components(separatedBy: "swift run kakapo ").last)
        var arguments = command.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: " ").map(String.init)
        let portIndex = try #require(arguments.firstIndex(of: "--port"))
        arguments[portIndex + 1] = "0"  // the test takes any free port instead of 8080
        let process = try KakapoProcess(arguments, directory: CLITests.packageRoot)
        let port = try await process.waitUntilListening()
        let address = "127.0.0.1:8080"

        var calls: [(command: String, expected: String)] = []
        for line in blocks[2].split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("$ ") {
                calls.append((String(line.dropFirst(2)), ""))
            } else if !calls.isEmpty {
                calls[calls.count - 1].expected += line + "\n"
            }
        }
        #expect(calls.count == 2)
        for call in calls {
            let words = call.command.split(separator: " ").map(String.init)
            try #require(words.first == "curl", "\(call.command)")
            let curlArguments = words.dropFirst().map {
                $0.replacingOccurrences(of: address, with: "127.0.0.1:\(port)")
            }
            let result = try await KakapoProcess.run(Array(curlArguments), executable: "/usr/bin/curl")
            let output = result.output.replacingOccurrences(of: "\r\n", with: "\n")
            // A replay's Date is the time of the replay (recorded times move with the clock): any date in the
            // transcript stands for it.
            let dates = output.split(separator: "\n").filter { $0.hasPrefix("Date: ") }
            for date in dates {
                let seconds = HTTPDate.parse(date.dropFirst("Date: ".count))
                #expect(seconds.map { abs($0 - Int64(Date().timeIntervalSince1970)) <= 300 } == true, "\(date)")
            }
            func dateless(_ text: String) -> String {
                text.split(separator: "\n", omittingEmptySubsequences: false).map {
                    $0.hasPrefix("Date: ") ? "Date: (now)" : String($0)
                }.joined(separator: "\n").trimmingCharacters(in: .newlines)
            }
            #expect(dateless(output) == dateless(call.expected), "\(call.command)")
        }

        process.send(SIGINT)
        #expect(try await process.waitForExit() == 0)
        let shown = blocks[3].split(separator: "\n").map(String.init)
        #expect(
            process.standardOutput
                == shown[0].replacingOccurrences(of: address, with: "127.0.0.1:\(port)") + "\n")
        for line in shown.dropFirst(2) {
            #expect(process.standardError.contains(line + "\n"), "\(line)\n\(process.standardError)")
        }
    }
}

/// The Swift snippets of the README and the guides are lines of example code that the build compiles and
/// the tests run, so they cannot rot.
@Suite("Documentation snippets")
struct DocsSnippetTests {
    /// The first fenced block of `language` after `heading` in `file`.
    static func block(_ file: String, after heading: String, language: String = "swift") throws -> String {
        let text = try "\n" + String(contentsOfFile: CLITests.packageRoot + "/" + file, encoding: .utf8)
        let section = try #require(text.range(of: "\n" + heading + "\n"), "\(file) has no heading \(heading)")
        let open = try #require(text[section.upperBound...].range(of: "```" + language + "\n"), "\(file): \(heading)")
        let close = try #require(text[open.upperBound...].range(of: "\n```"))
        return String(text[open.upperBound..<close.lowerBound])
    }

    /// The code of a snippet line: trimmed, without a trailing `// comment`; nil for blank and comment lines.
    static func code(_ line: Substring) -> String? {
        var text = line.trimmingCharacters(in: .whitespaces)
        if let comment = text.range(of: "  //") ?? text.range(of: " // ") {
            text = text[..<comment.lowerBound].trimmingCharacters(in: .whitespaces)
        }
        return text.isEmpty || text.hasPrefix("//") ? nil : text
    }

    @Test(
        "each snippet line is a line of the example it comes from",
        arguments: [
            ("README.md", "## Override endpoints in Swift", "Examples/KakapoExample/main.swift"),
            (
                "README.md", "## Tests in process, a cassette per test",
                "Examples/InProcessTesting/Tests/DemoClientTests/DemoClientTests.swift"
            ),
            ("docs/swift.md", "## Live logic in Swift, in front of the cassette", "Examples/KakapoExample/main.swift"),
            (
                "docs/swift.md", "## Kakapo in process, a cassette per test",
                "Examples/InProcessTesting/Tests/DemoClientTests/DemoClientTests.swift"
            ),
        ])
    func snippetLines(file: String, heading: String, example: String) throws {
        // The snippets name the demo cassette and a port where the example takes them from its arguments.
        let stated = [
            #"let server = try ProxyServer(cassette: "cassettes/demo.json", mode: .replay)"#:
                "let server = try ProxyServer(cassette: cassette, mode: .replay)",
            "try await server.run(port: 8080)": "let bound = try await server.start(port: port)",
        ]
        let source = try String(contentsOfFile: CLITests.packageRoot + "/" + example, encoding: .utf8)
        let lines = Set(source.split(separator: "\n").compactMap(Self.code))
        let snippet = try Self.block(file, after: heading)
        let missing = snippet.split(separator: "\n").compactMap(Self.code).filter { !lines.contains(stated[$0] ?? $0) }
        #expect(missing.isEmpty, "\(file) \(heading): not in \(example): \(missing)")
    }

    @Test("the README's pytest snippet is lines of the example suite")
    func pytestSnippet() throws {
        let source = try String(
            contentsOfFile: CLITests.packageRoot + "/Examples/pytest/test_users.py", encoding: .utf8)
        let lines = Set(source.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) })
        let snippet = try Self.block("README.md", after: "## A cassette per test, in any language", language: "python")
        let missing = snippet.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter {
            !$0.isEmpty && !lines.contains($0)
        }
        #expect(!snippet.isEmpty && missing.isEmpty, "not in Examples/pytest/test_users.py: \(missing)")
    }

    @Test("the routes guide shows the README's routes file, and both are the example's routes")
    func routesFile() throws {
        let readme = try Self.block("README.md", after: "## Override endpoints with a routes file", language: "yaml")
        let guide = try Self.block("docs/routes.md", after: "# Routes files", language: "yaml")
        #expect(readme == guide)
        let example = try String(
            contentsOfFile: CLITests.packageRoot + "/Examples/routes/demo.routes.yaml", encoding: .utf8)
        for path in ["path: /users", "path: /users/:id", "path: /todos", "seed: fixtures/todos.json"] {
            #expect(readme.contains(path) && example.contains(path), "\(path)")
        }
    }
}
