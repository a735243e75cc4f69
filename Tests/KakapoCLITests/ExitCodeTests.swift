import Foundation
import KakapoTestSupport
import Testing

/// The exit codes of `kakapo --help`, from the built binary: each kind of failure has its own.
@Suite("Exit codes")
struct ExitCodeTests {
    @Test("a second replay on a port the first one holds exits 4 and says the port is in use and what to do")
    func portInUse() async throws {
        let first = try KakapoProcess(["replay", "--cassette", CLITests.demoCassette, "--port", "0"])
        let port = try await first.waitUntilListening()
        let second = try await KakapoProcess.run(["replay", "--cassette", CLITests.demoCassette, "--port", "\(port)"])
        first.send(SIGTERM)
        #expect(try await first.waitForExit() == 0)
        #expect(second.status == 4, "\(second.error)")
        #expect(second.error.contains("in use"), "\(second.error)")
        #expect(second.error.contains("--port 0"), "\(second.error)")
        #expect(second.output.isEmpty, "nothing listens")
    }

    @Test("the help lists every exit code")
    func helpListsExitCodes() async throws {
        let help = try await KakapoProcess.run(["--help"])
        let words = help.output.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        #expect(help.status == 0)
        #expect(words.contains("2 usage error"), "\(help.output)")
        #expect(words.contains("4 the port is in use"), "\(help.output)")
    }
}
