import KakapoHTTP
import KakapoJSON
import KakapoStubs
import Yams

/// A YAML document turned into a `JSONValue`, remembering where each value started so errors found
/// later can name a line and column. Anchors and aliases are refused before the text is composed (a
/// routes file has no need of them, and they are how a small file expands to gigabytes).
struct YAMLDocument {
    let root: JSONValue
    private let marks: [[JSONPathComponent]: (line: Int, column: Int)]

    /// Parses `text`; throws a `RoutesError` with the line and column of a syntax error.
    init(_ text: String, file: String) throws(RoutesError) {
        if let found = YAMLAnchorScan.first(in: text) {
            throw RoutesError(
                path: [],
                message: found.isAlias
                    ? "YAML aliases (*\(found.name)) are not supported in a routes file"
                    : "YAML anchors (&\(found.name)) are not supported in a routes file; write the value out",
                file: file, line: found.line, column: found.column)
        }
        let node: Node?
        do {
            node = try Yams.compose(yaml: text)
        } catch let error as YamlError {
            throw YAMLDocument.describe(error, file: file)
        } catch {
            throw RoutesError(path: [], message: "\(error)", file: file, code: .syntax)
        }
        var marks: [[JSONPathComponent]: (line: Int, column: Int)] = [:]
        root =
            try node.map { (node) throws(RoutesError) in try YAMLDocument.convert(node, [], &marks, file) }
            ?? .object([:])
        self.marks = marks
    }

    /// Where the value at `path` (or its nearest parent that has a position) starts.
    func location(of path: [JSONPathComponent]) -> (line: Int, column: Int)? {
        var path = path
        while true {
            if let mark = marks[path] { return mark }
            if path.isEmpty { return nil }
            path.removeLast()
        }
    }

    private static func convert(
        _ node: Node, _ path: [JSONPathComponent], _ marks: inout [[JSONPathComponent]: (line: Int, column: Int)],
        _ file: String
    ) throws(RoutesError) -> JSONValue {
        if let mark = node.mark { marks[path] = (mark.line, mark.column) }
        switch node {
        case .scalar(let scalar):
            guard scalar.style == .plain else { return .string(scalar.string) }
            switch node.tag.description {
            case Tag.Name.null.rawValue: return .null
            case Tag.Name.bool.rawValue: return node.bool.map(JSONValue.bool) ?? .string(scalar.string)
            case Tag.Name.int.rawValue: return node.int.map { .number(JSONNumber($0)) } ?? .string(scalar.string)
            case Tag.Name.float.rawValue:
                guard let value = node.float, value.isFinite else { return .string(scalar.string) }
                return .number(JSONNumber(value))
            default: return .string(scalar.string)
            }
        case .sequence(let sequence):
            var elements: [JSONValue] = []
            for (index, element) in sequence.enumerated() {
                elements.append(try convert(element, path + [.index(index)], &marks, file))
            }
            return .array(elements)
        case .mapping(let mapping):
            var object = JSONObject()
            for (key, value) in mapping {
                guard case .scalar(let name) = key else {
                    throw RoutesError(
                        path: path, message: "a key must be plain text", file: file, line: key.mark?.line,
                        column: key.mark?.column)
                }
                if object[name.string] != nil {
                    throw RoutesError(
                        path: path + [.key(name.string)], message: "the key appears twice", file: file,
                        line: key.mark?.line, column: key.mark?.column)
                }
                object.append(key: name.string, value: try convert(value, path + [.key(name.string)], &marks, file))
            }
            return .object(object)
        case .alias:
            throw RoutesError(
                path: path, message: "YAML aliases are not supported in a routes file", file: file,
                line: node.mark?.line, column: node.mark?.column)
        }
    }

    private static func describe(_ error: YamlError, file: String) -> RoutesError {
        switch error {
        case .scanner(let context, let problem, let mark, _), .parser(let context, let problem, let mark, _),
            .composer(let context, let problem, let mark, _):
            // libyaml notices a problem where it gives up (often the end of the file); the context says
            // where the construct it was reading starts, which is where the user should look.
            guard let context, context.mark.line < mark.line || context.mark.column < mark.column else {
                return RoutesError(
                    path: [], message: "invalid YAML: \(problem)", file: file, line: mark.line, column: mark.column,
                    code: .syntax)
            }
            return RoutesError(
                path: [],
                message:
                    "invalid YAML: \(problem) \(context.text) that starts here (noticed at line \(mark.line), "
                    + "column \(mark.column))",
                file: file, line: context.mark.line, column: context.mark.column, code: .syntax)
        case .duplicatedKeysInMapping(let duplicates, let context):
            return RoutesError(
                path: [], message: "the key \(duplicates.map { "\"\($0)\"" }.joined(separator: ", ")) appears twice",
                file: file, line: context.mark.line, column: context.mark.column)
        default:
            return RoutesError(path: [], message: "invalid YAML: \(error)", file: file, code: .syntax)
        }
    }
}
