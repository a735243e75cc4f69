import Foundation
import KakapoTLS
import KakapoTestSupport
import NIOConcurrencyHelpers
import Testing

/// Issue 25: the CA's private key is never readable by another user, not even while it is being created.
@Suite("Trust: the CA key's file")
struct TrustCAFilesTests {
    @Test(
        "while 60 CAs are created, no file in their folders that holds a private key is ever readable by group or others"
    )
    func keyNeverExposed() throws {
        let root = try Fixtures.temporaryDirectory()
        let folders = (0..<60).map { root + "/ca\($0)" }
        let stop = NIOLockedValueBox(false)
        let exposed = NIOLockedValueBox<[String]>([])
        let watcher = Thread {
            // Another local user's view: any file that others may read, as often as it can look.
            while !stop.withLockedValue({ $0 }) {
                for folder in folders {
                    guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { continue }
                    for name in names where name != CertificateAuthority.certificateFileName {
                        // What another user could read: a file others may read that holds a key.
                        var status = stat()
                        let path = folder + "/" + name
                        guard stat(path, &status) == 0, status.st_mode & 0o077 != 0,
                            let text = try? String(contentsOfFile: path, encoding: .utf8), text.contains("PRIVATE KEY")
                        else { continue }
                        exposed.withLockedValue { $0.append(name + " " + String(status.st_mode & 0o777, radix: 8)) }
                    }
                }
            }
        }
        watcher.start()
        defer { stop.withLockedValue { $0 = true } }
        for folder in folders {
            let authority = try CertificateAuthority.loadOrCreate(directory: folder)
            let attributes = try FileManager.default.attributesOfItem(atPath: authority.keyPath)
            #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
            #expect(
                Set(try FileManager.default.contentsOfDirectory(atPath: folder)) == [
                    CertificateAuthority.certificateFileName, CertificateAuthority.keyFileName,
                ])
        }
        stop.withLockedValue { $0 = true }
        let seen = exposed.withLockedValue { $0 }
        #expect(seen.isEmpty, "readable by others at some point: \(seen.count) sightings, \(seen.prefix(3))")
    }
}
