import Foundation
import KakapoTestSupport
import Testing

/// `kakapo ca path` and `kakapo ca trust` through the built binary: where the CA lives (`$HOME`, relative
/// `--ca-dir`), and the trust steps printed for the system stores and the browsers.
@Suite("kakapo ca")
struct CACommandTests {
    /// Runs the binary with `HOME` set to `home` (through `env`, which the helpers can start).
    private func kakapo(
        _ arguments: [String], home: String, directory: String? = nil
    ) async throws -> (status: Int32, output: String, error: String) {
        try await KakapoProcess.run(
            ["HOME=\(home)", KakapoProcess.binary] + arguments, directory: directory, executable: "/usr/bin/env")
    }

    @Test("ca path makes and names the CA under $HOME, not the account's home folder")
    func pathFollowsHome() async throws {
        let home = try Fixtures.temporaryDirectory()
        let result = try await kakapo(["ca", "path"], home: home)
        #expect(result.status == 0, "\(result.error)")
        #expect(result.output == home + "/.kakapo/ca/kakapo-ca.pem\n")
        #expect(FileManager.default.fileExists(atPath: home + "/.kakapo/ca/kakapo-ca.pem"))
    }

    @Test("a relative --ca-dir is printed as an absolute path, taken from the working directory")
    func relativeDirectoryIsPrintedAbsolute() async throws {
        let home = try Fixtures.temporaryDirectory()
        let work = try Fixtures.temporaryDirectory()
        let result = try await kakapo(["ca", "path", "--ca-dir", "certs/../my-ca"], home: home, directory: work)
        #expect(result.status == 0, "\(result.error)")
        #expect(result.output == work + "/my-ca/kakapo-ca.pem\n")
        #expect(FileManager.default.fileExists(atPath: work + "/my-ca/kakapo-ca-key.pem"))
        let trust = try await kakapo(["ca", "trust", "--ca-dir", "my-ca"], home: home, directory: work)
        #expect(trust.output.hasPrefix("Kakapo's CA certificate: \(work)/my-ca/kakapo-ca.pem\n"))
    }

    @Test("ca trust prints the NSS steps for Chromium and Firefox next to the system stores")
    func trustNamesBrowsers() async throws {
        let home = try Fixtures.temporaryDirectory()
        let result = try await kakapo(["ca", "trust"], home: home)
        #expect(result.status == 0, "\(result.error)")
        let certificate = home + "/.kakapo/ca/kakapo-ca.pem"
        #expect(result.output.contains("sudo update-ca-certificates"))
        #expect(
            result.output.contains(#"certutil -d sql:"$HOME/.pki/nssdb" -A -t C,, -n kakapo -i "\#(certificate)""#))
        #expect(result.output.contains("--proxy-bypass-list='<-loopback>'"))
        #expect(result.output.contains("Firefox"))
        #expect(result.output.contains("network.proxy.allow_hijacking_localhost"))
    }
}
