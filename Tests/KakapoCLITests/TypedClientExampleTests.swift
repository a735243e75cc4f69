import Foundation
import Kakapo
import KakapoTestSupport
import Testing

/// `Examples/TypedClient`: one typed API used against a live API, stubbed, and from the demo cassette.
@Suite("Typed client example")
struct TypedClientExampleTests {
    static func run(_ arguments: [String]) async throws -> String {
        let process = try KakapoProcess(
            arguments, directory: CLITests.packageRoot, executable: KakapoProcess.builtProduct("kakapo-typed-client"))
        #expect(try await process.waitForExit() == 0, "\(process.standardError)")
        return process.standardOutput
    }

    @Test("the same calls answered by a live API, by sample data and by the demo cassette in process")
    func threeWays() async throws {
        let api = try await TestUpstream.start { request in
            let users =
                #"[{"id": "1", "name": "Live Ada", "email": "a@x"}, {"id": "2", "name": "Live Grace", "email": "g@x"}]"#
            switch request.path {
            case "/users": return .response(HTTP.Response(status: 200, contentType: "application/json", text: users))
            case "/users/1":
                return .response(
                    HTTP.Response(
                        status: 200, contentType: "application/json", text: #"{"id": "1", "name": "Live Ada"}"#))
            default: return .response(HTTP.Response(status: 404, contentType: "application/json", text: "{}"))
            }
        }
        defer { Task { await api.stop() } }
        #expect(
            try await Self.run(["live", api.baseURL])
                == "users: Live Ada, Live Grace\nuser 1: Live Ada\nuser 42: status 404\n")
        #expect(try await Self.run(["stubbed"]) == "users: Sample User\nuser 1: Sample User\nuser 42: found\n")
        #expect(
            try await Self.run(["cassette", "cassettes/demo.json"])
                == "users: Ada Lovelace, Grace Hopper\nuser 1: Ada Lovelace\nuser 42: status 404\n")
    }

    @Test("docs/swift.md's transcript of the example is what it prints")
    func guideTranscript() async throws {
        let guide = try String(contentsOfFile: CLITests.packageRoot + "/docs/swift.md", encoding: .utf8)
        let command = "$ swift run kakapo-typed-client "
        let start = try #require(guide.range(of: "\n" + command), "docs/swift.md shows no \(command)")
        let block = guide[start.upperBound...].prefix { $0 != "`" }
        let lines = block.split(separator: "\n", omittingEmptySubsequences: false)
        let arguments = try #require(lines.first).split(separator: " ").map(String.init)
        let shown = lines.dropFirst().joined(separator: "\n")
        #expect(arguments == ["cassette", "cassettes/demo.json"])
        #expect(try await Self.run(arguments) == shown)
    }
}
