import Foundation
import Kakapo
import KakapoTestSupport
import Testing

/// The version, set once in `KakapoVersion`, as `kakapo --version` and the health answer report it, and the
/// generated command-line reference that must match the built binary.
@Suite("Release: version and generated reference")
struct ReleaseVersionTests {
    @Test("kakapo --version prints the one version and exits 0")
    func versionFlag() async throws {
        let result = try await KakapoProcess.run(["--version"])
        #expect(result.status == 0, "\(result.error)")
        #expect(result.output == KakapoVersion.current + "\n")
        #expect(KakapoVersion.current.split(separator: ".").count == 3)
    }

    @Test("GET /__kakapo/health names the same version as kakapo --version")
    func healthVersion() async throws {
        let process = try KakapoProcess(["replay", "--cassette", CLITests.demoCassette, "--port", "0"])
        let port = try await process.waitUntilListening()
        let client = try TestClient(port: port)
        let health = try await client.send(.get, "/__kakapo/health")
        client.shutdown()
        process.send(SIGTERM)
        _ = try await process.waitForExit()
        #expect(health.status == 200)
        let body = try JSONParser.parse(health.body)
        #expect(body["version"] == .string(KakapoVersion.current), "\(health.text)")
        #expect(body["status"] == .string("ok"))
    }

    @Test("docs/cli.md is what tools/cli-docs.sh generates from the built binary now")
    func cliReferenceIsCurrent() async throws {
        let committed = try String(contentsOfFile: CLITests.packageRoot + "/docs/cli.md", encoding: .utf8)
        let result = try await KakapoProcess.run(
            ["KAKAPO_BIN=\(KakapoProcess.binary)", "bash", CLITests.packageRoot + "/tools/cli-docs.sh", "--stdout"],
            executable: "/usr/bin/env")
        #expect(result.status == 0, "\(result.error)")
        #expect(result.output.contains("## kakapo record\n"))
        #expect(
            result.output == committed,
            "docs/cli.md is out of date: run tools/cli-docs.sh after swift build, and commit docs/cli.md")
    }
}
