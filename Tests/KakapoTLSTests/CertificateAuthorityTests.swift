import Foundation
import KakapoTLS
import KakapoTestSupport
import Testing

extension HTTPSTests {
    /// Kakapo's CA: made once, kept private, and described by `kakapo ca`.
    @Suite("Kakapo's certificate authority")
    struct CertificateAuthorityTests {
        @Test("created on first use with the key at mode 0600 in a 0700 folder, then loaded unchanged")
        func createdOnceAndPrivate() async throws {
            let directory = try Fixtures.temporaryDirectory() + "/nested/ca"
            let path = try await KakapoProcess.run(["ca", "path", "--ca-dir", directory])
            #expect(path.status == 0)
            #expect(path.output == directory + "/kakapo-ca.pem\n")
            let attributes = try FileManager.default.attributesOfItem(atPath: directory + "/kakapo-ca-key.pem")
            #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
            let folder = try FileManager.default.attributesOfItem(atPath: directory)
            #expect((folder[.posixPermissions] as? NSNumber)?.intValue == 0o700)
            let certificate = try String(contentsOfFile: directory + "/kakapo-ca.pem", encoding: .utf8)
            #expect(certificate.hasPrefix("-----BEGIN CERTIFICATE-----"))

            let again = try CertificateAuthority.loadOrCreate(directory: directory)
            #expect(try String(contentsOfFile: again.certificatePath, encoding: .utf8) == certificate)
            // openssl, when there, agrees it is a CA.
            if FileManager.default.isExecutableFile(atPath: "/usr/bin/openssl") {
                let text = try await KakapoProcess.run(
                    ["x509", "-in", again.certificatePath, "-noout", "-text"], executable: "/usr/bin/openssl")
                #expect(text.output.contains("CA:TRUE"))
            }
        }

        @Test("kakapo ca trust names the certificate and the steps for macOS, Debian/Ubuntu and the iOS simulator")
        func trustInstructions() async throws {
            let directory = try Fixtures.temporaryDirectory() + "/ca"
            let result = try await KakapoProcess.run(["ca", "trust", "--ca-dir", directory])
            #expect(result.status == 0)
            for expected in [
                directory + "/kakapo-ca.pem", "security add-trusted-cert", "update-ca-certificates",
                "simctl keychain booted add-root-cert",
            ] {
                #expect(result.output.contains(expected), "missing \(expected)")
            }
        }

        @Test("a folder with a certificate but no key is refused with what to do, and nothing is overwritten")
        func halfACA() async throws {
            let directory = try Fixtures.temporaryDirectory() + "/ca"
            _ = try CertificateAuthority.loadOrCreate(directory: directory)
            try FileManager.default.removeItem(atPath: directory + "/kakapo-ca-key.pem")
            let result = try await KakapoProcess.run(["ca", "path", "--ca-dir", directory])
            #expect(result.status == 3)
            #expect(result.error.contains("has the CA certificate but not its key"))
            #expect(!FileManager.default.fileExists(atPath: directory + "/kakapo-ca-key.pem"))
        }

        @Test("bad TLS flags say which flag and why")
        func badFlags() async throws {
            let missing = try await KakapoProcess.run([
                "replay", "--cassette", CLIFixtures.demoCassette, "--tls-cert", "/nonexistent.pem", "--port", "0",
            ])
            #expect(missing.status == 2)
            #expect(missing.error.contains("--tls-cert and --tls-key go together"))
            let intercept = try await KakapoProcess.run([
                "replay", "--cassette", CLIFixtures.demoCassette, "--intercept", "api.example.com",
            ])
            #expect(intercept.status == 2)
            #expect(intercept.error.contains("--intercept only applies to the forward proxy: add --proxy"))
            let record = try await KakapoProcess.run(["record", "--cassette", "/tmp/x.json"])
            #expect(record.status == 2)
            #expect(record.error.contains("give --upstream URL, or --proxy"))
        }
    }
}
