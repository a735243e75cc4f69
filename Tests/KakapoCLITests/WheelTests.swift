import Foundation
import KakapoTestSupport
import Testing

/// `tools/build-wheel.py`: the kakapo-proxy wheel that carries the binary, installed by pip from the file
/// into a new venv with no index (the clean-root check in tools/check-clean-machine.sh installs the
/// release build's wheel where no Swift is).
@Suite("The kakapo-proxy wheel")
struct WheelTests {
    static let python = CLITests.packageRoot + "/.build/python-venv/bin/python"
    static let builder = CLITests.packageRoot + "/tools/build-wheel.py"

    @Test("a wheel of the built binary installs offline, puts kakapo on the venv's PATH and tells Python where it is")
    func installsAndRuns() async throws {
        let directory = try Fixtures.temporaryDirectory()
        // The debug build needs the toolchain's Swift libraries: without --allow-swift-runtime it is refused.
        let refused = try await KakapoProcess.run(
            [Self.builder, KakapoProcess.binary, directory], executable: Self.python)
        #expect(refused.status == 1)
        #expect(refused.error.contains("build it with --static-swift-stdlib"), "\(refused.error)")

        let built = try await KakapoProcess.run(
            [
                "SOURCE_DATE_EPOCH=1700000000", Self.python, Self.builder, "--allow-swift-runtime",
                KakapoProcess.binary, directory,
            ],
            executable: "/usr/bin/env", timeout: .seconds(300))
        #expect(built.status == 0, "\(built.error)")
        let wheel = built.output.trimmingCharacters(in: .whitespacesAndNewlines)
        let name = URL(fileURLWithPath: wheel).lastPathComponent
        #expect(name.hasPrefix("kakapo_proxy-0.") && name.contains("-py3-none-manylinux_2_"), "\(name)")
        #expect(name.hasSuffix("_x86_64.whl") || name.hasSuffix("_aarch64.whl"), "\(name)")

        // Every file's hash in RECORD is the file's, and the binary is a script with its mode.
        let check = try await KakapoProcess.run(
            [
                "-c",
                """
                import base64, hashlib, sys, zipfile
                wheel = zipfile.ZipFile(sys.argv[1])
                names = wheel.namelist()
                record = [n for n in names if n.endswith(".dist-info/RECORD")][0]
                for line in wheel.read(record).decode().splitlines():
                    path, digest, size = line.rsplit(",", 2)
                    if path == record:
                        continue
                    data = wheel.read(path)
                    want = "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
                    assert digest == want and int(size) == len(data), path
                script = [n for n in names if n.endswith(".data/scripts/kakapo")][0]
                assert (wheel.getinfo(script).external_attr >> 16) & 0o777 == 0o755
                assert names[-1] == record, names
                print("record ok", len(names))
                """,
                wheel,
            ], executable: Self.python)
        #expect(check.status == 0 && check.output.contains("record ok"), "\(check.error)")

        let venv = directory + "/venv"
        let made = try await KakapoProcess.run(["-m", "venv", venv], executable: Self.python, timeout: .seconds(300))
        #expect(made.status == 0, "\(made.error)")
        let installed = try await KakapoProcess.run(
            ["PIP_FIND_LINKS=", venv + "/bin/pip", "install", "-q", "--no-index", "--no-deps", wheel],
            executable: "/usr/bin/env", timeout: .seconds(300))
        #expect(installed.status == 0, "\(installed.error)")

        let version = try await KakapoProcess.run(["--version"], executable: venv + "/bin/kakapo")
        let expected = try await KakapoProcess.run(["--version"])
        #expect(version.status == 0 && version.output == expected.output, "\(version.error)")
        let module = try await KakapoProcess.run(["-m", "kakapo_proxy", "--version"], executable: venv + "/bin/python")
        #expect(module.status == 0 && module.output == expected.output, "\(module.error)")
        let path = try await KakapoProcess.run(
            ["-c", "import kakapo_proxy; print(kakapo_proxy.binary_path())"], executable: venv + "/bin/python")
        #expect(path.output == venv + "/bin/kakapo\n", "\(path.error)")

        // The same binary and time make the same wheel.
        let again = try await KakapoProcess.run(
            [
                "SOURCE_DATE_EPOCH=1700000000", Self.python, Self.builder, "--allow-swift-runtime",
                KakapoProcess.binary, directory + "/again",
            ],
            executable: "/usr/bin/env", timeout: .seconds(300))
        let first = try Data(contentsOf: URL(fileURLWithPath: wheel))
        let second = try Data(
            contentsOf: URL(fileURLWithPath: again.output.trimmingCharacters(in: .whitespacesAndNewlines)))
        #expect(first == second)
    }

    @Test("what is not a Linux kakapo binary is refused with the reason, and nothing is written")
    func refusesOtherFiles() async throws {
        let directory = try Fixtures.temporaryDirectory()
        let script = directory + "/kakapo.sh"
        try "#!/bin/sh\necho kakapo\n".write(toFile: script, atomically: true, encoding: .utf8)
        var elf = [UInt8](repeating: 0, count: 64)
        elf.replaceSubrange(0..<4, with: [0x7F, 0x45, 0x4C, 0x46])
        elf[4] = 2
        elf[5] = 1
        elf[18] = 0x28  // 32-bit ARM
        let arm = directory + "/arm"
        try Data(elf).write(to: URL(fileURLWithPath: arm))
        elf[18] = 0x3E  // x86_64, but it names no glibc version
        let noGlibc = directory + "/static"
        try Data(elf).write(to: URL(fileURLWithPath: noGlibc))
        for (file, reason) in [
            (script, "not an ELF executable"), (arm, "neither x86_64 nor aarch64"), (noGlibc, "names no GLIBC_2.*"),
            (directory + "/absent", "no such file"),
        ] {
            let result = try await KakapoProcess.run([Self.builder, file, directory + "/out"], executable: Self.python)
            #expect(result.status == 1)
            #expect(result.error.contains(reason), "\(file): \(result.error)")
        }
        let version = try await KakapoProcess.run(
            [Self.builder, "--allow-swift-runtime", "--version", "1.0; rm", KakapoProcess.binary, directory + "/out"],
            executable: Self.python)
        #expect(version.status == 1)
        #expect(version.error.contains("version 1.0; rm is not a wheel version"), "\(version.error)")
        let written = (try? FileManager.default.contentsOfDirectory(atPath: directory + "/out")) ?? []
        #expect(written.isEmpty, "\(written)")
    }
}
