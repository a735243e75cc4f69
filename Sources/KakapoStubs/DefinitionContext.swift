import Foundation
import KakapoJSON

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
        let path = name.hasPrefix("/") ? name : baseDirectory + "/" + name
        guard let data = FileManager.default.contents(atPath: path) else {
            throw node.error("cannot read the file \(path)")
        }
        return Array(data)
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
