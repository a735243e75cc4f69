import KakapoJSON

/// One GraphQL operation as a client sent it: the document, the `operationName` it gave (if any), its
/// variables, and any other member of its JSON object (such as `extensions`).
public struct GraphQLOperation: Sendable {
    /// The query document.
    public let document: GraphQLDocument
    /// `operationName` as sent; nil when the client gave none (or an empty one, which GraphQL servers read as
    /// none).
    public let operationName: String?
    /// The variables as sent; nil when the client gave none (or null, or an empty object: the same to a
    /// server).
    public let variables: JSONValue?
    /// Other members of the operation's JSON object, in order (`extensions`); empty for the other forms.
    public let otherMembers: [(key: String, value: JSONValue)]

    /// Builds an operation from its parts; nil when `query` is not an executable document.
    public init?(
        query: String, operationName: String?, variables: JSONValue?,
        otherMembers: [(key: String, value: JSONValue)] = []
    ) {
        guard let document = GraphQLDocument(query) else { return nil }
        self.document = document
        self.operationName = operationName?.isEmpty == true ? nil : operationName
        // Not `flatMap`: JSONValue is ExpressibleByNilLiteral, so a `nil` there would be `.null`.
        if let variables, !variables.isNull, variables.objectValue?.members.isEmpty != true {
            self.variables = variables
        } else {
            self.variables = nil
        }
        self.otherMembers = otherMembers
    }

    /// Reads `{"query": "...", "operationName": "...", "variables": {...}}`; nil when `json` is not such an
    /// object or its `query` is not a document.
    public init?(json: JSONValue) {
        guard case .object(let object) = json, case .string(let query)? = object["query"] else { return nil }
        let name = object["operationName"]?.stringValue
        let others = object.members.filter { !["query", "operationName", "variables"].contains($0.key) }
        self.init(query: query, operationName: name, variables: object["variables"], otherMembers: others)
    }

    /// The operation's name: `operationName`, else the name of the document's only operation; nil for an
    /// anonymous operation.
    public var name: String? { operationName ?? document.operation(named: nil)?.name }

    /// The kind of the operation that runs; nil when the document does not say (no operation by that name).
    public var kind: GraphQLOperationKind? { document.operation(named: operationName)?.kind }

    /// How people read it: `query GetUser`, `mutation CreateUser`, `query (anonymous)`.
    public var label: String {
        "\(kind?.rawValue ?? "operation") \(name ?? "(anonymous)")"
    }

    /// The operation in the form it is compared in, shaped like the JSON body a client would send, so the
    /// same JSON pointers (`/variables/id`) apply to every form: the resolved name (null when anonymous),
    /// the normalised document, the variables (an empty object when there are none) and the other members.
    public var matchingForm: JSONValue {
        var object = JSONObject()
        object.append(key: "operationName", value: name.map(JSONValue.string) ?? .null)
        object.append(key: "query", value: .string(document.normalized))
        object.append(key: "variables", value: variables ?? .object(JSONObject()))
        for member in otherMembers { object.append(key: member.key, value: member.value) }
        return .object(object)
    }
}
