import KakapoJSON

/// Everything a routes file declares: `{"routes": [...], "resources": [...]}`, both optional.
///
/// ```json
/// {"routes": [{"method": "GET", "path": "/users/:id", "response": {"json": {"id": "{{params.id}}"}}}],
///  "resources": [{"path": "/todos", "seed": "fixtures/todos.json"}]}
/// ```
public struct RoutesDefinition: Sendable {
    public var routes: [Stub]
    public var resources: [ResourceDefinition]

    public init(routes: [Stub] = [], resources: [ResourceDefinition] = []) {
        self.routes = routes
        self.resources = resources
    }

    /// Reads a whole document. Errors name the key path (`routes[2].response.status`); the file reader
    /// adds the file, line and column.
    public init(_ document: JSONValue, context: DefinitionContext) throws(RoutesError) {
        let root = DefinitionNode(document)
        let object = try root.object(allowed: ["routes", "resources"])
        var routes: [Stub] = []
        for (index, node) in try (object["routes"]?.array() ?? []).enumerated() {
            routes.append(try Stub(node, index: index, context: context))
        }
        var resources: [ResourceDefinition] = []
        for node in try object["resources"]?.array() ?? [] {
            let resource = try ResourceDefinition(node, context: context)
            if resources.contains(where: { $0.path == resource.path }) {
                throw node.error("the resource \(resource.path) is declared twice")
            }
            resources.append(resource)
        }
        var seen: Set<String> = []
        for (index, route) in routes.enumerated() where !seen.insert(route.id).inserted {
            throw RoutesError(
                path: [.key("routes"), .index(index), .key("id")], message: "the id \"\(route.id)\" is used twice")
        }
        self.routes = routes
        self.resources = resources
    }

    /// One route object, as the admin API receives it.
    public static func route(_ value: JSONValue, id: String, context: DefinitionContext) throws(RoutesError) -> Stub {
        try Stub(DefinitionNode(value), index: 0, context: context, fallbackID: id)
    }

    /// This definition followed by `other` (several `--routes` files).
    public func appending(_ other: RoutesDefinition) -> RoutesDefinition {
        RoutesDefinition(routes: routes + other.routes, resources: resources + other.resources)
    }
}
