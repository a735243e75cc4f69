import Foundation
import Kakapo
import KakapoTestSupport
import Testing

/// `install.sh` with a local archive in the release layout (the debug binary, completions generated from it,
/// a man page, LICENSE and README), into a PREFIX in a temporary folder, without root.
@Suite("Release: install.sh")
struct ReleaseInstallTests {
    static let installScript = CLITests.packageRoot + "/install.sh"

    /// Runs a tool found on PATH to completion.
    static func tool(_ arguments: [String], directory: String? = nil) async throws -> (status: Int32, output: String) {
        let result = try await KakapoProcess.run(arguments, directory: directory, executable: "/usr/bin/env")
        try #require(result.status == 0, "\(arguments.joined(separator: " ")) failed: \(result.error)")
        return (result.status, result.output)
    }

    /// Builds `kakapo-VERSION-linux-ARCH.tar.gz` and its `.sha256` in `folder`; returns the archive's path.
    static func makeArchive(in folder: String) async throws -> String {
        let name = "kakapo-\(KakapoVersion.current)-linux-x86_64"
        let stage = folder + "/" + name
        let files = FileManager.default
        for sub in [
            "bin", "share/man/man1", "share/bash-completion/completions", "share/zsh/site-functions",
            "share/fish/vendor_completions.d", "share/kakapo",
        ] {
            try files.createDirectory(atPath: stage + "/" + sub, withIntermediateDirectories: true)
        }
        try files.copyItem(atPath: KakapoProcess.binary, toPath: stage + "/bin/kakapo")
        for (shell, path) in [
            ("bash", "share/bash-completion/completions/kakapo"), ("zsh", "share/zsh/site-functions/_kakapo"),
            ("fish", "share/fish/vendor_completions.d/kakapo.fish"),
        ] {
            let script = try await KakapoProcess.run(["--generate-completion-script", shell])
            #expect(script.status == 0)
            try script.output.write(toFile: stage + "/" + path, atomically: true, encoding: .utf8)
        }
        try ".TH \"KAKAPO\" \"1\"\n".write(
            toFile: stage + "/share/man/man1/kakapo.1", atomically: true, encoding: .utf8)
        try files.copyItem(atPath: CLITests.demoCassette, toPath: stage + "/share/kakapo/demo.json")
        try files.copyItem(atPath: CLITests.packageRoot + "/LICENSE", toPath: stage + "/LICENSE")
        try "Runtime packages: libcurl4 ca-certificates\n".write(
            toFile: stage + "/README", atomically: true, encoding: .utf8)
        // gzip -1: the debug binary is large and only the layout matters here.
        _ = try await tool(["tar", "-C", folder, "-I", "gzip -1", "-cf", folder + "/" + name + ".tar.gz", name])
        try files.removeItem(atPath: stage)
        let sum = try await tool(["sha256sum", name + ".tar.gz"], directory: folder)
        try sum.output.write(toFile: folder + "/" + name + ".tar.gz.sha256", atomically: true, encoding: .utf8)
        return folder + "/" + name + ".tar.gz"
    }

    /// Runs install.sh with PREFIX set.
    static func install(_ arguments: [String], prefix: String) async throws -> (
        status: Int32, output: String, error: String
    ) {
        try await KakapoProcess.run(
            ["PREFIX=\(prefix)", "sh", installScript] + arguments, executable: "/usr/bin/env")
    }

    @Test("installs kakapo, its completions and man page under PREFIX after checking the .sha256 beside the archive")
    func installsLocalArchive() async throws {
        let folder = try Fixtures.temporaryDirectory()
        let archive = try await Self.makeArchive(in: folder)
        let prefix = folder + "/prefix"
        let result = try await Self.install([archive], prefix: prefix)
        #expect(result.status == 0, "\(result.error)")
        #expect(result.output.contains("installed kakapo \(KakapoVersion.current) into \(prefix)/bin/kakapo"))
        for path in [
            "bin/kakapo", "share/man/man1/kakapo.1", "share/bash-completion/completions/kakapo",
            "share/zsh/site-functions/_kakapo", "share/fish/vendor_completions.d/kakapo.fish",
            "share/kakapo/demo.json", "share/kakapo/LICENSE",
        ] {
            #expect(FileManager.default.fileExists(atPath: prefix + "/" + path), "\(path) missing")
        }
        let version = try await KakapoProcess.run(["--version"], executable: prefix + "/bin/kakapo")
        #expect(version.status == 0)
        #expect(version.output == KakapoVersion.current + "\n")

        // Again over the installed copy, with the checksum given on the command line (any case).
        let sum = try String(contentsOfFile: archive + ".sha256", encoding: .utf8).prefix(64).uppercased()
        try FileManager.default.removeItem(atPath: archive + ".sha256")
        let again = try await Self.install(["--sha256", sum, archive], prefix: prefix)
        #expect(again.status == 0, "\(again.error)")
    }

    @Test("refuses an archive whose SHA-256 differs, and installs nothing")
    func refusesWrongChecksum() async throws {
        let folder = try Fixtures.temporaryDirectory()
        let archive = try await Self.makeArchive(in: folder)
        let prefix = folder + "/prefix"
        let wrong = String(repeating: "0", count: 64)
        let given = try await Self.install(["--sha256", wrong, archive], prefix: prefix)
        #expect(given.status == 1)
        #expect(given.error.contains("checksum mismatch for \(archive): expected \(wrong)"), "\(given.error)")
        #expect(!FileManager.default.fileExists(atPath: prefix + "/bin/kakapo"))

        try "\(wrong)  \((archive as NSString).lastPathComponent)\n".write(
            toFile: archive + ".sha256", atomically: true, encoding: .utf8)
        let beside = try await Self.install([archive], prefix: prefix)
        #expect(beside.status == 1)
        #expect(beside.error.contains("checksum mismatch"), "\(beside.error)")
        #expect(!FileManager.default.fileExists(atPath: prefix + "/bin/kakapo"))

        let malformed = try await Self.install(["--sha256", "abc", archive], prefix: prefix)
        #expect(malformed.status == 1)
        #expect(malformed.error.contains("is not 64 hex digits"), "\(malformed.error)")
    }
}
