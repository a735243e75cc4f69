import KakapoHTTP
import KakapoJSON
import KakapoRouter

/// A REST resource declared in a routes file: a collection of JSON objects in the Store, served at `path`
/// the way json-server serves one.
public struct ResourceDefinition: Equatable, Sendable {
    /// Where the entities come from at start (and after a reset of the Store).
    public enum Seed: Hashable, Sendable {
        /// No entities.
        case none
        /// These objects, from the routes file or a JSON file it names.
        case documents([JSONObject])
        /// The JSON array answered by the recording of `METHOD TARGET` in the loaded cassette.
        case cassette(method: HTTP.Method, target: String)
    }

    /// The collection's path, such as `/todos`; items are at `/todos/{id}`.
    public let path: String
    /// The member that holds an entity's id.
    public let idField: String
    public let seed: Seed
    /// The resource object as it was written.
    public let definition: JSONValue
    /// Where `seed` is in the document, for errors found later (a cassette seed that does not resolve).
    public let seedPath: [JSONPathComponent]
    /// Where `seed` is in its file, filled in by the file reader.
    public var seedLocation: (file: String, line: Int?, column: Int?)?

    static let keys = ["path", "seed", "idField"]

    public static func == (a: ResourceDefinition, b: ResourceDefinition) -> Bool {
        a.path == b.path && a.idField == b.idField && a.seed == b.seed
    }

    /// A resource without a seed, for resources declared in Swift (`resources.add`).
    public init(path: String, idField: String = "id") {
        self.path = path
        self.idField = idField
        self.seed = .none
        self.definition = ["path": .string(path), "idField": .string(idField)]
        self.seedPath = []
    }

    init(_ node: DefinitionNode, context: DefinitionContext) throws(RoutesError) {
        let object = try node.object(allowed: ResourceDefinition.keys)
        definition = node.value
        guard let pathNode = object["path"] else { throw object.error("a resource needs a \"path\"") }
        let text = try pathNode.string()
        let pattern: RoutePattern
        do {
            pattern = try RoutePattern(text)
        } catch {
            throw pathNode.error(error.message)
        }
        guard !pattern.segments.isEmpty, pattern.segments.allSatisfy({ if case .constant = $0 { true } else { false } })
        else {
            throw pathNode.error("a resource path is a plain path such as /todos, without parameters or wildcards")
        }
        path = "/" + text.split(separator: "/").joined(separator: "/")
        idField = try object["idField"]?.string() ?? "id"
        seedPath = node.path + [.key("seed")]
        guard let seedNode = object["seed"] else {
            seed = .none
            return
        }
        switch seedNode.value {
        case .string:
            seed = .documents(try ResourceDefinition.documents(context.readJSON(seedNode), at: seedNode))
        case .array:
            seed = .documents(try ResourceDefinition.documents(seedNode.value, at: seedNode))
        default:
            let cassette = try seedNode.object(allowed: ["cassette"])
            guard let request = cassette["cassette"] else {
                throw seedNode.error("expected a file name, an array of objects, or {\"cassette\": \"GET /todos\"}")
            }
            let parts = try request.string().split(separator: " ", maxSplits: 1)
            guard parts.count == 2, parts[1].hasPrefix("/") else {
                throw request.error("expected a recorded request as \"METHOD /path\", such as \"GET /todos\"")
            }
            seed = .cassette(method: HTTP.Method(parts[0].uppercased()), target: String(parts[1]))
        }
    }

    /// Checks that a seed is an array of objects.
    static func documents(_ value: JSONValue, at node: DefinitionNode) throws(RoutesError) -> [JSONObject] {
        guard case .array(let elements) = value else {
            throw node.error("a seed must be a JSON array of objects, not \(value.kindDescription)")
        }
        var documents: [JSONObject] = []
        for (index, element) in elements.enumerated() {
            guard case .object(let object) = element else {
                throw node.error("element \(index) of the seed is \(element.kindDescription), not an object")
            }
            documents.append(object)
        }
        return documents
    }

    /// Checks a seed taken from a recording: an array of objects.
    public func documents(fromRecorded value: JSONValue) throws(RoutesError) -> [JSONObject] {
        try ResourceDefinition.documents(value, at: DefinitionNode(value, path: seedPath))
    }
}
