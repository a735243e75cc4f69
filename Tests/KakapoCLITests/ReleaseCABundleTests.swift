import Foundation
import Kakapo
import KakapoTestSupport
import Testing

/// True where this process may make a mount namespace (root with util-linux's unshare, as on this
/// project's machines and CI).
private let canHideCABundle: Bool = {
    #if os(Linux)
        guard geteuid() == 0, FileManager.default.isExecutableFile(atPath: "/usr/bin/unshare") else { return false }
        return (try? KakapoProcess.runBlocking(["-m", "--", "/bin/true"], executable: "/usr/bin/unshare")) == 0
    #else
        return false
    #endif
}()

/// An HTTPS upstream on a machine without the system's CA certificates (a minimal container or root without
/// the ca-certificates package), seen by running `kakapo` in a mount namespace where `/etc/ssl` and
/// `/etc/pki` are empty.
@Suite("Release: no system CA bundle", .enabled(if: canHideCABundle))
struct ReleaseCABundleTests {
    /// Runs `kakapo arguments` with the system's CA folders hidden behind empty tmpfs mounts.
    static func withoutCABundle(_ arguments: [String]) throws -> KakapoProcess {
        let script = """
            for folder in /etc/ssl /etc/pki; do
                [ -d "$folder" ] || continue
                mount -t tmpfs -o size=16k tmpfs "$folder" || exit 99
            done
            exec "$@"
            """
        return try KakapoProcess(
            ["-m", "--", "/bin/sh", "-c", script, "sh", KakapoProcess.binary] + arguments,
            executable: "/usr/bin/unshare")
    }

    @Test("an https upstream without CA certificates fails at start, naming what is missing and how to provide it")
    func missingBundleIsNamed() async throws {
        let folder = try Fixtures.temporaryDirectory()
        let process = try Self.withoutCABundle([
            "record", "--upstream", "https://127.0.0.1:9", "--cassette", folder + "/api.json", "--port", "0",
        ])
        let status = try await process.waitForExit()
        #expect(status == 3, "\(process.standardError)")
        let message = process.standardError
        #expect(message.contains("cannot set up TLS to the upstream https://127.0.0.1:9"), "\(message)")
        #expect(message.contains("no CA certificates"), "\(message)")
        #expect(message.contains("/etc/ssl/certs/ca-certificates.crt"), "\(message)")
        #expect(message.contains("apt-get install ca-certificates"), "\(message)")
        #expect(message.contains("--upstream-ca"), "\(message)")
        #expect(!message.contains("unknownError"), "\(message)")
    }

    @Test("the forward proxy starts without CA certificates (hosts it cannot check fail one by one, not at start)")
    func forwardProxyStarts() async throws {
        let folder = try Fixtures.temporaryDirectory()
        let process = try Self.withoutCABundle([
            "record", "--proxy", "--ca-dir", folder + "/ca", "--cassette", folder + "/api.json", "--port", "0",
        ])
        let port = try await process.waitUntilListening()
        #expect(port > 0)
        process.send(SIGTERM)
        #expect(try await process.waitForExit() == 0, "\(process.standardError)")
    }

    @Test("--upstream-ca alone is enough to record from an https upstream, through TLS setup and libcurl")
    func upstreamCAAloneRecords() async throws {
        let folder = try Fixtures.temporaryDirectory()
        // The upstream: the demo cassette answered over TLS with a certificate from a fresh Kakapo CA.
        let upstream = try KakapoProcess([
            "replay", "--cassette", CLITests.demoCassette, "--tls", "--ca-dir", folder + "/ca", "--port", "0",
        ])
        let upstreamPort = try await upstream.waitUntilListening()
        defer { upstream.send(SIGKILL) }
        let caFile = folder + "/ca/kakapo-ca.pem"
        #expect(FileManager.default.fileExists(atPath: caFile))

        let recorder = try Self.withoutCABundle([
            "record", "--upstream", "https://127.0.0.1:\(upstreamPort)", "--upstream-ca", caFile,
            "--cassette", folder + "/api.json", "--port", "0",
        ])
        let port = try await recorder.waitUntilListening()
        let client = try TestClient(port: port)
        let user = try await client.send(.get, "/users/1")
        client.shutdown()
        #expect(user.status == 200, "\(user.text) \(recorder.standardError)")
        #expect(user.text.contains("Ada Lovelace"))
        recorder.send(SIGTERM)
        #expect(try await recorder.waitForExit() == 0, "\(recorder.standardError)")
        let cassette = try String(contentsOfFile: folder + "/api.json", encoding: .utf8)
        #expect(cassette.contains("Ada Lovelace"))
    }
}
