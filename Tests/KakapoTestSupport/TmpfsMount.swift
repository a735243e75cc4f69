import Foundation

/// A tiny tmpfs mounted for a test, to make a disk full or read-only for real. Needs root and `mount`
/// (as on this project's machines and CI); tests that use it are enabled only where it works.
public final class TmpfsMount {
    public let path: String

    /// True when this process may mount file systems.
    public static let available: Bool = {
        guard geteuid() == 0, let probe = try? TmpfsMount(kilobytes: 16) else { return false }
        probe.unmount()
        return true
    }()

    /// Mounts a tmpfs of `kilobytes` at a new folder.
    public init(kilobytes: Int) throws {
        path = NSTemporaryDirectory() + "kakapo-tmpfs-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        try TmpfsMount.run(["mount", "-t", "tmpfs", "-o", "size=\(kilobytes)k", "tmpfs", path])
    }

    /// Makes the file system read-only.
    public func makeReadOnly() throws { try TmpfsMount.run(["mount", "-o", "remount,ro", path]) }

    public func unmount() {
        try? TmpfsMount.run(["umount", path])
        try? FileManager.default.removeItem(atPath: path)
    }

    private static func run(_ arguments: [String]) throws {
        guard try KakapoProcess.runBlocking(arguments, executable: "/usr/bin/env") == 0 else {
            throw KakapoProcess.Failure(description: "\(arguments.joined(separator: " ")) failed")
        }
    }
}
