import Foundation
import Kakapo
import KakapoTestSupport
import Testing

/// `install.sh` given archives a hostile release page could serve with a matching `.sha256`: members that
/// would land outside the unpacking folder and links that would make it copy (and publish under
/// share/kakapo) a file of the installing machine. Each is refused before anything is installed.
@Suite("Release: install.sh refuses hostile archives")
struct InstallHostileTests {
    /// Writes `kakapo-VERSION-linux-x86_64.tar.gz` and its `.sha256` in `folder` with Python's tarfile: a
    /// working `bin/kakapo` (a script printing the version) plus `extra`, each `(member name, kind, target)`
    /// where kind is `file`, `symlink` or `hardlink`.
    static func archive(in folder: String, extra: [(String, String, String)]) async throws -> String {
        let name = "kakapo-\(KakapoVersion.current)-linux-x86_64"
        let script = """
            import io, sys, tarfile, json
            name, out, extra = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
            def add(tar, member, data=b"", kind="file", target="", mode=0o644):
                info = tarfile.TarInfo(member)
                info.mode = mode
                if kind == "symlink":
                    info.type, info.linkname = tarfile.SYMTYPE, target
                elif kind == "hardlink":
                    info.type, info.linkname = tarfile.LNKTYPE, target
                else:
                    info.size = len(data)
                tar.addfile(info, io.BytesIO(data) if kind == "file" else None)
            with tarfile.open(out, "w:gz") as tar:
                add(tar, name + "/bin/kakapo", b"#!/bin/sh\\necho \(KakapoVersion.current)\\n", mode=0o755)
                for member, kind, target in extra:
                    add(tar, member, b"hostile\\n", kind, target)
            """
        let archive = folder + "/" + name + ".tar.gz"
        let json = String(
            decoding: try JSONSerialization.data(withJSONObject: extra.map { [$0.0, $0.1, $0.2] }), as: UTF8.self)
        let made = try await KakapoProcess.run(
            ["python3", "-c", script, name, archive, json], executable: "/usr/bin/env")
        try #require(made.status == 0, "\(made.error)")
        let sum = try await KakapoProcess.run(
            ["sha256sum", name + ".tar.gz"], directory: folder, executable: "/usr/bin/env")
        try sum.output.write(toFile: archive + ".sha256", atomically: true, encoding: .utf8)
        return archive
    }

    static func install(_ archive: String, prefix: String) async throws -> (
        status: Int32, output: String, error: String
    ) {
        try await ReleaseInstallTests.install([archive], prefix: prefix)
    }

    @Test("a README linked to a file of this machine is refused; the file is not copied")
    func refusesSymlinkedFile() async throws {
        let folder = try Fixtures.temporaryDirectory()
        let secret = folder + "/secret"
        try "private key\n".write(toFile: secret, atomically: true, encoding: .utf8)
        let name = "kakapo-\(KakapoVersion.current)-linux-x86_64"
        let archive = try await Self.archive(in: folder, extra: [(name + "/README", "symlink", secret)])
        let prefix = folder + "/prefix"
        let result = try await Self.install(archive, prefix: prefix)
        #expect(result.status == 1)
        #expect(result.error.contains("holds a link or special file"), "\(result.error)")
        #expect(result.error.contains("README"), "\(result.error)")
        #expect(!FileManager.default.fileExists(atPath: prefix + "/share/kakapo/README"))
        #expect(!FileManager.default.fileExists(atPath: prefix + "/bin/kakapo"))
    }

    @Test("a folder of the archive linked outside it, or a hard link to an absolute path, is refused")
    func refusesLinkedFolderAndHardLink() async throws {
        let folder = try Fixtures.temporaryDirectory()
        let name = "kakapo-\(KakapoVersion.current)-linux-x86_64"
        for extra in [(name + "/share", "symlink", folder), (name + "/LICENSE", "hardlink", "/etc/hostname")] {
            let sub = folder + "/" + extra.1
            try FileManager.default.createDirectory(atPath: sub, withIntermediateDirectories: true)
            let archive = try await Self.archive(in: sub, extra: [extra])
            let result = try await Self.install(archive, prefix: sub + "/prefix")
            #expect(result.status == 1, "\(extra.1)")
            #expect(result.error.contains("nothing installed"), "\(extra.1): \(result.error)")
            #expect(!FileManager.default.fileExists(atPath: sub + "/prefix/bin/kakapo"), "\(extra.1)")
        }
    }

    @Test("members with an absolute path, a .. or outside the archive's folder are refused, naming the member")
    func refusesMembersOutside() async throws {
        let folder = try Fixtures.temporaryDirectory()
        let name = "kakapo-\(KakapoVersion.current)-linux-x86_64"
        for (index, member) in [
            folder + "/planted", name + "/../planted", "../planted", "other/planted", name + "x/planted",
        ].enumerated() {
            let sub = folder + "/\(index)"
            try FileManager.default.createDirectory(atPath: sub, withIntermediateDirectories: true)
            let archive = try await Self.archive(in: sub, extra: [(member, "file", "")])
            let result = try await Self.install(archive, prefix: sub + "/prefix")
            #expect(result.status == 1, "\(member)")
            #expect(result.error.contains("outside \(name)/; nothing installed"), "\(member): \(result.error)")
            #expect(!FileManager.default.fileExists(atPath: sub + "/prefix/bin/kakapo"), "\(member)")
        }
        #expect(!FileManager.default.fileExists(atPath: folder + "/planted"))
    }

    @Test("an archive over plain http:// needs --sha256: a .sha256 fetched beside it is not trusted")
    func plainHTTPNeedsPinnedSum() async throws {
        let folder = try Fixtures.temporaryDirectory()
        let archive = try await Self.archive(in: folder, extra: [])
        let name = (archive as NSString).lastPathComponent
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: archive)))
        let sum = try String(contentsOfFile: archive + ".sha256", encoding: .utf8)
        let served = try await TestUpstream.start { request in
            switch request.target {
            case "/" + name: return .response(HTTP.Response(status: 200, headers: [:], body: bytes))
            case "/" + name + ".sha256":
                return .response(HTTP.Response(status: 200, headers: [:], body: Array(sum.utf8)))
            default: return .response(HTTP.Response(status: 404, headers: [:], body: []))
            }
        }
        let url = served.baseURL + "/" + name
        let refused = try await Self.install(url, prefix: folder + "/refused")
        #expect(refused.status == 1)
        #expect(refused.error.contains("plain http://") && refused.error.contains("--sha256"), "\(refused.error)")
        #expect(!FileManager.default.fileExists(atPath: folder + "/refused/bin/kakapo"))
        #expect(served.received.isEmpty, "downloaded before refusing: \(served.received.map(\.target))")
        // The sum published elsewhere, pinned: installs.
        let pinned = try await ReleaseInstallTests.install(
            ["--sha256", String(sum.prefix(64)), url], prefix: folder + "/pinned")
        #expect(pinned.status == 0, "\(pinned.error)")
        #expect(FileManager.default.fileExists(atPath: folder + "/pinned/bin/kakapo"))
        await served.stop()
    }

    @Test("a checksum file with more text after the sum, or a folder with spaces, still installs")
    func checksumWithTextAndSpaces() async throws {
        let folder = try Fixtures.temporaryDirectory() + "/with spaces"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let archive = try await Self.archive(in: folder, extra: [])
        let sum = try String(contentsOfFile: archive + ".sha256", encoding: .utf8)
        try (sum + "signed by someone\n\u{1}\u{2}\n").write(
            toFile: archive + ".sha256", atomically: true, encoding: .utf8)
        let result = try await Self.install(archive, prefix: folder + "/pre fix")
        #expect(result.status == 0, "\(result.error)")
        #expect(FileManager.default.fileExists(atPath: folder + "/pre fix/bin/kakapo"))
    }
}
