import Foundation
import KakapoHTTP
import KakapoJSON
import OpenAPIKit
import OpenAPIKit30
import OpenAPIKitCompat
import Yams

/// An OpenAPI description (3.0, 3.1 or 3.2; JSON or YAML) read through OpenAPIKit, ready to answer which
/// operation a recorded request names. 3.0 documents are converted to the 3.1 model, so one checker
/// serves every version.
public struct OpenAPISpec: Sendable {
    /// The document, in OpenAPIKit's 3.1 model.
    public let document: OpenAPIKit.OpenAPI.Document
    /// The version the file declares (`3.0.3`, `3.1.0`).
    public let declaredVersion: String
    /// Path prefixes taken from `servers` (`/v1` for `https://api.example.com/v1`), longest first.
    public let serverPrefixes: [String]
    /// Whether a path may come without a server prefix: when no server is declared, or one has no path.
    public let allowsUnprefixedPaths: Bool
    let templates: [PathTemplate]

    /// Wraps a document already in memory.
    public init(document: OpenAPIKit.OpenAPI.Document, declaredVersion: String? = nil) {
        self.document = document
        self.declaredVersion = declaredVersion ?? document.openAPIVersion.rawValue
        self.serverPrefixes = Self.prefixes(of: document.servers)
        self.allowsUnprefixedPaths = Self.prefixes(of: document.servers, keepingEmpty: true).contains("")
        self.templates = document.paths.keys.map(PathTemplate.init)
    }

    /// Reads a spec file: YAML for `.yaml`/`.yml`, otherwise JSON (or YAML when it does not start like JSON).
    public static func load(_ file: String) throws(OpenAPISpecError) -> OpenAPISpec {
        guard let data = FileManager.default.contents(atPath: file) else {
            throw OpenAPISpecError(file: file, message: "cannot read the file", code: .unreadable)
        }
        let lowercased = file.lowercased()
        let firstByte = data.first(where: { ![0x20, 0x09, 0x0A, 0x0D].contains($0) })
        let isYAML = lowercased.hasSuffix(".yaml") || lowercased.hasSuffix(".yml") || firstByte != UInt8(ascii: "{")
        return try decode(data, yaml: isYAML, file: file)
    }

    /// Reads a spec from bytes; `file` names it in errors.
    public static func decode(_ data: Data, yaml: Bool, file: String) throws(OpenAPISpecError) -> OpenAPISpec {
        // Kakapo's parsers first, for what the decoders below do not give: the line and column of a syntax
        // error, and (JSON) duplicate keys refused.
        if !yaml {
            do {
                _ = try JSONParser.parse(Array(data))
            } catch {
                throw OpenAPISpecError(
                    file: file, message: "not valid JSON: \(error.message)", line: error.line, column: error.column,
                    code: .syntax, cause: error)
            }
        }
        let text = String(decoding: data, as: UTF8.self)
        if yaml {
            do {
                _ = try Yams.compose(yaml: text)
            } catch {
                throw OpenAPISpecError(file: file, message: "not valid YAML: \(error)", code: .syntax, cause: error)
            }
        }
        func decode<T: Decodable>(_ type: T.Type) throws -> T {
            yaml ? try YAMLDecoder().decode(type, from: text) : try JSONDecoder().decode(type, from: data)
        }
        let probe: VersionProbe
        do {
            probe = try decode(VersionProbe.self)
        } catch {
            throw OpenAPISpecError(
                file: file, message: "not a \(yaml ? "YAML" : "JSON") object: \(describe(error))", cause: error)
        }
        guard let version = probe.openapi else {
            if let swagger = probe.swagger {
                throw OpenAPISpecError(
                    file: file, message: "Swagger \(swagger) is not supported; convert it to OpenAPI 3 first")
            }
            throw OpenAPISpecError(file: file, message: "no `openapi` version field; is this an OpenAPI document?")
        }
        do {
            if version.hasPrefix("3.0") {
                let document = try decode(OpenAPIKit30.OpenAPI.Document.self)
                return OpenAPISpec(document: document.convert(to: .v3_1_1), declaredVersion: version)
            }
            if version.hasPrefix("3.1") || version.hasPrefix("3.2") {
                return OpenAPISpec(document: try decode(OpenAPIKit.OpenAPI.Document.self), declaredVersion: version)
            }
        } catch {
            throw OpenAPISpecError(file: file, message: describe(error), cause: error)
        }
        throw OpenAPISpecError(file: file, message: "OpenAPI \(version) is not supported (3.0, 3.1 and 3.2 are)")
    }

    private struct VersionProbe: Decodable {
        let openapi: String?
        let swagger: String?
    }

    private static func describe(_ error: any Error) -> String {
        if error is DecodingError {
            let wrapped = OpenAPIKit.OpenAPI.Error(from: error)
            let path = wrapped.codingPathString
            return path.isEmpty ? wrapped.localizedDescription : "\(path): \(wrapped.localizedDescription)"
        }
        return "\(error)"
    }

    /// The operations whose path template matches `path`, the most specific first, with the path
    /// parameters each one binds. Server prefixes are tried longest first, then none when a server (or
    /// the default `/`) has no path.
    func matches(path: String) -> [(template: PathTemplate, parameters: [String: String])] {
        matches(path: path, prefixes: serverPrefixes + (allowsUnprefixedPaths ? [""] : []))
    }

    /// The server prefixes `path` lacks: those it would match the spec with, when it matches it without
    /// any prefix but every server has one (`/pets/mine` for a `/v1` server). Empty otherwise.
    func missingPrefixes(of path: String) -> [String] {
        guard !allowsUnprefixedPaths, matches(path: path).isEmpty, !matches(path: path, prefixes: [""]).isEmpty else {
            return []
        }
        return serverPrefixes.sorted()
    }

    private func matches(path: String, prefixes: [String]) -> [(template: PathTemplate, parameters: [String: String])] {
        for prefix in prefixes {
            guard let rest = Self.strip(prefix, from: path) else { continue }
            let found = templates.compactMap { template in
                template.match(rest).map { (template: template, parameters: $0) }
            }
            if !found.isEmpty {
                return found.sorted { $0.template.isMoreSpecific(than: $1.template) }
            }
        }
        return []
    }

    private static func strip(_ prefix: String, from path: String) -> String? {
        if prefix.isEmpty { return path }
        guard path.hasPrefix(prefix) else { return nil }
        let rest = String(path.dropFirst(prefix.count))
        if rest.isEmpty { return "/" }
        return rest.hasPrefix("/") ? rest : nil
    }

    /// The path part of each server URL (variables replaced by their defaults), without a trailing slash.
    /// With `keepingEmpty`, a server without a path (or no server at all: the spec's default is `/`)
    /// gives the empty prefix.
    static func prefixes(of servers: [OpenAPIKit.OpenAPI.Server], keepingEmpty: Bool = false) -> [String] {
        if servers.isEmpty { return keepingEmpty ? [""] : [] }
        var prefixes: Set<String> = []
        for server in servers {
            var url = server.urlTemplate.rawValue
            for (name, variable) in server.variables {
                url = url.replacingOccurrences(of: "{\(name)}", with: variable.default)
            }
            var path = url
            if let scheme = url.range(of: "://") {
                let afterHost = url[scheme.upperBound...]
                path = afterHost.firstIndex(of: "/").map { String(afterHost[$0...]) } ?? ""
            }
            if let query = path.firstIndex(where: { $0 == "?" || $0 == "#" }) { path = String(path[..<query]) }
            while path.hasSuffix("/") { path.removeLast() }
            if !path.isEmpty && path.hasPrefix("/") {
                prefixes.insert(path)
            } else if keepingEmpty {
                prefixes.insert("")
            }
        }
        return prefixes.sorted { $0.count > $1.count || ($0.count == $1.count && $0 < $1) }
    }
}
