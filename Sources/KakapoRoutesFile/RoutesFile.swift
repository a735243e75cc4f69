import Foundation
import KakapoHTTP
import KakapoJSON
import KakapoStubs

/// Reads routes files: JSON, or YAML when the name ends in `.yaml` or `.yml`. Every error names the file,
/// the line and column, and the key path:
/// `routes.yaml:12:15: routes[2].response.status: expected an integer from 100 to 599`.
///
/// ```swift
/// let definition = try RoutesFile.load("routes.json")
/// try server.pipeline.install(definition)
/// ```
public enum RoutesFile {
    /// Reads and checks one file.
    public static func load(_ path: String) throws(RoutesError) -> RoutesDefinition {
        let (definition, errors) = check(path)
        if let first = errors.first { throw first }
        return definition
    }

    /// Reads one file and finds every error in it (one per route or resource, each with its line, column
    /// and key path, in the order of the file), as `kakapo routes lint` reports them. The definition
    /// holds the routes and resources that are valid.
    public static func check(_ path: String) -> (definition: RoutesDefinition, errors: [RoutesError]) {
        do {
            return try read(path)
        } catch {
            return (RoutesDefinition(), [error])
        }
    }

    private static func read(_ path: String) throws(RoutesError) -> (
        definition: RoutesDefinition, errors: [RoutesError]
    ) {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw RoutesError(
                path: [],
                message: FileManager.default.fileExists(atPath: path) ? "cannot read the file" : "no such file",
                file: path, code: .unreadable)
        }
        let context = DefinitionContext(file: path)
        if isYAML(path) {
            guard let text = String(data: data, encoding: .utf8) else {
                throw RoutesError(path: [], message: "the file is not UTF-8 text", file: path, code: .syntax)
            }
            let document = try YAMLDocument(text, file: path)
            return decode(document.root, context: context, file: path, locate: document.location(of:))
        }
        let bytes = Array(data)
        let root: JSONValue
        do {
            root = try JSONParser.parse(bytes, options: JSONParser.Options(rejectDuplicateKeys: true))
        } catch {
            throw RoutesError(
                path: [], message: error.message, file: path, line: error.line, column: error.column, code: .syntax)
        }
        return decode(root, context: context, file: path) { JSONParser.location(of: $0, in: bytes) }
    }

    /// Reads several files into one definition, in order.
    public static func load(_ paths: [String]) throws(RoutesError) -> RoutesDefinition {
        var combined = RoutesDefinition()
        for path in paths { combined = combined.appending(try load(path)) }
        return combined
    }

    /// True for names ending in `.yaml` or `.yml`.
    public static func isYAML(_ path: String) -> Bool {
        let lowered = path.lowercased()
        return lowered.hasSuffix(".yaml") || lowered.hasSuffix(".yml")
    }

    private static func decode(
        _ root: JSONValue, context: DefinitionContext, file: String,
        locate: ([JSONPathComponent]) -> (line: Int, column: Int)?
    ) -> (definition: RoutesDefinition, errors: [RoutesError]) {
        var errors: [RoutesError] = []
        var definition = RoutesDefinition(root, context: context, errors: &errors)
        for index in definition.resources.indices {
            let position = locate(definition.resources[index].seedPath)
            definition.resources[index].seedLocation = (file, position?.line, position?.column)
        }
        return (definition, errors.map { located($0, file: file, locate: locate) })
    }

    /// `error` with the file and the position of its key path (or of the nearest parent that has one).
    static func located(
        _ error: RoutesError, file: String, locate: ([JSONPathComponent]) -> (line: Int, column: Int)?
    ) -> RoutesError {
        var located = error
        located.file = file
        var path = error.path
        while true {
            if let position = locate(path) {
                located.line = position.line
                located.column = position.column
                break
            }
            if path.isEmpty { break }
            path.removeLast()
        }
        return located
    }
}
