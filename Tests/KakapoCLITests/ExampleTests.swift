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
        try #require(blocks.count == 4, "\(blocks)")
        #expect(blocks[0] == "tools/setup.sh && swift run kakapo replay --cassette cassettes/demo.json --port 8080\n")
        #expect(blocks[1] == "tools/test.sh\n")
        for script in ["tools/setup.sh", "tools/test.sh"] {
            #expect(FileManager.default.isExecutableFile(atPath: CLITests.packageRoot + "/" + script), "\(script)")
        }
    }

    @Test("replays the demo cassette and answers the curl calls with the output it shows")
    func transcript() async throws {
        let blocks = try Self.quickStart()
        try #require(blocks.count == 4, "\(blocks)")
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
            #expect(
                output.trimmingCharacters(in: .newlines) == call.expected.trimmingCharacters(in: .newlines),
                "\(call.command)")
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
