import Foundation
import KakapoTestSupport
import Testing

/// What a newcomer runs first from a fresh clone: `tools/setup.sh` without PyPI, the install step that puts
/// `kakapo` on PATH, and `tools/test.sh`, which builds once and says what it installs.
@Suite("The first ten minutes from source")
struct FirstTenMinutesTests {
    /// A copy of `tools/setup.sh` and the pyproject it hashes in a new folder (so no venv of the checkout
    /// is there), with `python3` and `pip` that fail as they do without PyPI, first on PATH.
    static func offlineCopy() throws -> (root: String, path: String) {
        let root = try Fixtures.temporaryDirectory()
        let files = FileManager.default
        try files.createDirectory(atPath: root + "/tools", withIntermediateDirectories: true)
        try files.createDirectory(atPath: root + "/clients/python", withIntermediateDirectories: true)
        try files.createDirectory(atPath: root + "/offline", withIntermediateDirectories: true)
        try files.copyItem(atPath: CLITests.packageRoot + "/tools/setup.sh", toPath: root + "/tools/setup.sh")
        try files.copyItem(
            atPath: CLITests.packageRoot + "/clients/python/pyproject.toml",
            toPath: root + "/clients/python/pyproject.toml")
        for tool in ["python3", "pip", "pip3"] {
            let stub = root + "/offline/" + tool
            try "#!/bin/sh\necho \"\(tool): no network (PyPI unreachable)\" >&2\nexit 1\n".write(
                toFile: stub, atomically: true, encoding: .utf8)
            chmod(stub, 0o755)
        }
        let path = root + "/offline:" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
        return (root, path)
    }

    @Test(
        "tools/setup.sh needs no PyPI: what running needs is there, so it exits 0 offline; --tests is where PyPI comes in"
    )
    func setupNeedsNoPyPI() async throws {
        // The test setup installed the system packages, as tools/setup.sh does on a new machine.
        let (root, path) = try Self.offlineCopy()
        let setup = try await KakapoProcess.run(
            ["PATH=\(path)", "bash", root + "/tools/setup.sh"], executable: "/usr/bin/env", timeout: .seconds(120))
        #expect(setup.status == 0, "\(setup.error)")
        #expect(!setup.error.contains("venv") && !setup.error.contains("PyPI"), "\(setup.error)")
        #expect(!FileManager.default.fileExists(atPath: root + "/.build"), "no venv is made for running")
        // The tests' venv is a separate step, and offline it fails loudly.
        let tests = try await KakapoProcess.run(
            ["PATH=\(path)", "bash", root + "/tools/setup.sh", "--tests"], executable: "/usr/bin/env",
            timeout: .seconds(120))
        #expect(tests.status != 0)
        #expect(tests.error.contains("making the Python venv of the tests"), "\(tests.error)")
        let unknown = try await KakapoProcess.run(
            ["bash", root + "/tools/setup.sh", "--test"], executable: "/usr/bin/env")
        #expect(unknown.status == 2 && unknown.error.contains("unknown option --test"), "\(unknown.error)")
    }

    @Test("tools/install-from-source.sh puts kakapo on PATH with its completions, and says how to add the folder")
    func installFromSource() async throws {
        let prefix = try Fixtures.temporaryDirectory() + "/prefix"
        // The build step is `swift build -c release`, which the running `swift test` would wait for (it
        // holds the package's build lock): the binary this test run built is installed instead.
        let install = try await KakapoProcess.run(
            [
                "PREFIX=\(prefix)", "KAKAPO_BINARY=\(KakapoProcess.binary)", "PATH=/usr/bin:/bin",
                CLITests.packageRoot + "/tools/install-from-source.sh",
            ], executable: "/usr/bin/env", timeout: .seconds(120))
        #expect(install.status == 0, "\(install.error)")
        let version = try await KakapoProcess.run(["--version"])
        let installed = version.output.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(
            install.output.hasPrefix("installed kakapo \(installed) into \(prefix)/bin/kakapo\n"), "\(install.output)")
        #expect(install.output.contains(#"add \#(prefix)/bin to your PATH: export PATH="\#(prefix)/bin:$PATH""#))
        for file in [
            "bin/kakapo", "share/bash-completion/completions/kakapo", "share/zsh/site-functions/_kakapo",
            "share/fish/vendor_completions.d/kakapo.fish", "share/kakapo/demo.json",
        ] {
            #expect(FileManager.default.fileExists(atPath: prefix + "/" + file), "\(file)")
        }
        // With the folder on PATH, a plain `kakapo` runs, and the install no longer asks for it.
        let onPath = try await KakapoProcess.run(
            ["PATH=\(prefix)/bin:/usr/bin:/bin", "sh", "-c", "kakapo --version"], executable: "/usr/bin/env")
        #expect(onPath.status == 0 && onPath.output == installed + "\n", "\(onPath)")
        let again = try await KakapoProcess.run(
            [
                "PREFIX=\(prefix)", "KAKAPO_BINARY=\(KakapoProcess.binary)", "PATH=\(prefix)/bin:/usr/bin:/bin",
                CLITests.packageRoot + "/tools/install-from-source.sh",
            ], executable: "/usr/bin/env", timeout: .seconds(120))
        #expect(again.status == 0 && !again.output.contains("to your PATH"), "\(again.output)")
        let missing = try await KakapoProcess.run(
            [
                "PREFIX=\(prefix)", "KAKAPO_BINARY=\(prefix)/none",
                CLITests.packageRoot + "/tools/install-from-source.sh",
            ],
            executable: "/usr/bin/env")
        #expect(missing.status != 0 && missing.error.contains("no kakapo binary at \(prefix)/none"), "\(missing.error)")
    }

    @Test("tools/test.sh builds once (swift test --skip-build on the one build) and says what it installs first")
    func testScriptBuildsOnce() throws {
        let script = try String(contentsOfFile: CLITests.packageRoot + "/tools/test.sh", encoding: .utf8)
        let commands = script.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter {
            !$0.hasPrefix("#")
        }
        let builds = commands.filter { $0.contains("swift build") }
        let tests = commands.filter { $0.contains("swift test") }
        #expect(builds.count == 1 && builds.first?.contains("--build-tests") == true, "\(builds)")
        #expect(!tests.isEmpty && tests.allSatisfy { $0.contains("swift test --skip-build") }, "\(tests)")
        // What it installs is said before anything is installed.
        let said = try #require(commands.firstIndex { $0.hasPrefix("echo \"tools/test.sh: installs what") })
        let setup = try #require(commands.firstIndex { $0.hasPrefix("tools/setup.sh") })
        #expect(said < setup && commands[setup] == "tools/setup.sh --tests")
        for name in ["nodejs", "chromium", "firefox-esr", "tinyproxy", "postgresql", "PyPI"] {
            #expect(commands[said].contains(name), "\(name)")
        }
    }
}
