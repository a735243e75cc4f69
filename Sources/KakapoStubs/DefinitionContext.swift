import Foundation
import KakapoJSON

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Where a routes definition came from, so relative file names (`file` bodies, `seed` files) resolve.
public struct DefinitionContext: Sendable {
    /// The folder relative file names start from.
    public let baseDirectory: String
    /// Names routes get when they have no `id`: `NAME#INDEX`.
    public let idPrefix: String
    /// True for definitions from the admin API: file names may not leave `baseDirectory`.
    public let confined: Bool

    public init(baseDirectory: String, idPrefix: String, confined: Bool = false) {
        self.baseDirectory = baseDirectory
        self.idPrefix = idPrefix
        self.confined = confined
    }

    /// The context of a routes file: names relative to its folder, ids named after it.
    public init(file: String) {
        let url = URL(fileURLWithPath: file)
        self.init(baseDirectory: url.deletingLastPathComponent().path, idPrefix: url.lastPathComponent)
    }

    /// The bytes of `name` (a string node), relative to `baseDirectory`.
    func read(_ node: DefinitionNode) throws(RoutesError) -> [UInt8] {
        let name = try node.string()
        if confined, name.hasPrefix("/") || name.split(separator: "/").contains("..") {
            throw node.error("a file given through the admin API must be relative and stay inside \(baseDirectory)")
        }
        var path = name.hasPrefix("/") ? name : baseDirectory + "/" + name
        if confined { path = try confinedPath(path, node) }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw node.error("cannot read the file \(path)")
        }
        return Array(data)
    }

    /// The most bytes a file named through the admin API may have.
    static let largestConfinedFile = 64 << 20

    /// `path` with every symbolic link on the way resolved; throws unless that is a regular file inside
    /// `baseDirectory` (also resolved) of at most `largestConfinedFile` bytes: a link in the working folder
    /// must not lead a definition from the admin API to `~/.ssh` or `/dev/zero`.
    private func confinedPath(_ path: String, _ node: DefinitionNode) throws(RoutesError) -> String {
        guard let base = Self.realPath(baseDirectory), let resolved = Self.realPath(path) else {
            throw node.error("cannot read the file \(path)")
        }
        guard resolved.hasPrefix(base == "/" ? "/" : base + "/") else {
            throw node.error(
                "a file given through the admin API must stay inside \(baseDirectory), symbolic links resolved (this one leads to \(resolved))"
            )
        }
        var info = stat()
        guard stat(resolved, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            throw node.error("a file given through the admin API must be a regular file: \(path) is not")
        }
        guard info.st_size <= Self.largestConfinedFile else {
            throw node.error(
                "a file given through the admin API may have at most \(Self.largestConfinedFile) bytes; \(path) has \(info.st_size)"
            )
        }
        return resolved
    }

    private static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// The JSON document in file `node` names.
    func readJSON(_ node: DefinitionNode) throws(RoutesError) -> JSONValue {
        let bytes = try read(node)
        do {
            return try JSONParser.parse(bytes)
        } catch {
            throw node.error("\((try? node.string()) ?? ""):\(error)")
        }
    }
}
