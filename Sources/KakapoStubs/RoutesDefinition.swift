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
    /// adds the file, line and column. Throws the first error; `init(_:context:errors:)` gathers them all.
    public init(_ document: JSONValue, context: DefinitionContext) throws(RoutesError) {
        var errors: [RoutesError] = []
        self.init(document, context: context, errors: &errors)
        if let first = errors.first { throw first }
    }

    /// Reads a whole document, appending every error found to `errors` (one per route or resource, plus
    /// those of the document's shape) and keeping the routes and resources that are valid.
    public init(_ document: JSONValue, context: DefinitionContext, errors: inout [RoutesError]) {
        var routes: [Stub] = []
        var resources: [ResourceDefinition] = []
        RoutesDefinition.read(document, context: context, into: &routes, &resources, errors: &errors)
        self.routes = routes
        self.resources = resources
    }

    private static func read(
        _ document: JSONValue, context: DefinitionContext, into routes: inout [Stub],
        _ resources: inout [ResourceDefinition], errors: inout [RoutesError]
    ) {
        let root = DefinitionNode(document)
        let object: DefinitionObject
        do {
            object = try root.object(allowed: ["routes", "resources"])
        } catch {
            errors.append(error)
            guard case .object(let members) = document else { return }
            object = DefinitionObject(members: members, path: [])
        }
        var seen: Set<String> = []
        do throws(RoutesError) {
            for (index, node) in try (object["routes"]?.array() ?? []).enumerated() {
                do throws(RoutesError) {
                    let route = try Stub(node, index: index, context: context)
                    guard seen.insert(route.id).inserted else {
                        throw RoutesError(
                            path: node.path + [.key("id")], message: "the id \"\(route.id)\" is used twice")
                    }
                    routes.append(route)
                } catch {
                    errors.append(error)
                }
            }
        } catch {
            errors.append(error)
        }
        do throws(RoutesError) {
            for node in try object["resources"]?.array() ?? [] {
                do throws(RoutesError) {
                    let resource = try ResourceDefinition(node, context: context)
                    if resources.contains(where: { $0.path == resource.path }) {
                        throw node.error("the resource \(resource.path) is declared twice")
                    }
                    resources.append(resource)
                } catch {
                    errors.append(error)
                }
            }
        } catch {
            errors.append(error)
        }
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
