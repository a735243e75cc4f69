import KakapoHTTP
import KakapoJSON

/// The GraphQL operation (or batch of operations) an HTTP request carries, in any of the three forms
/// clients use: a POST with a JSON body holding a string `query` (or an array of such objects: a batch), a
/// POST with `Content-Type: application/graphql` (the body is the document; `operationName` and
/// `variables` may come as query parameters), or a GET with a `query` parameter (`operationName` and
/// `variables`, as JSON, in parameters too).
///
/// Finding out costs nothing for other requests: the document is read only for a POST whose JSON body
/// has a string `query`, a POST of `application/graphql`, or a GET whose target has `query=`.
public struct GraphQLRequest: Sendable {
    /// The operations, one unless `isBatch`.
    public let operations: [GraphQLOperation]
    /// True when the body was an array of operations.
    public let isBatch: Bool

    /// The query parameters that belong to the operation in the GET and `application/graphql` forms, so
    /// they are compared as the operation, not as parameters.
    public static let parameterNames: Set<String> = ["query", "operationName", "variables"]

    /// How many operations a batch may hold; a larger array is not taken for GraphQL.
    public static let batchLimit = 1_000

    /// The request `request` carries, in any form; `json` gives its body parsed as JSON and is called only
    /// for a POST whose body may hold JSON.
    public init?(_ request: HTTP.Request, json: () -> JSONValue?) {
        if let outside = GraphQLRequest(outsideJSONBody: request) {
            self = outside
            return
        }
        guard request.method == .post, let body = json(), let parsed = GraphQLRequest(json: body) else { return nil }
        self = parsed
    }

    /// The GET and `application/graphql` forms: the ones that need no JSON body parsed. Nil at once for any
    /// other request.
    public init?(outsideJSONBody request: HTTP.Request) {
        let document: String
        if request.method == .get {
            guard request.target.utf8.contains(UInt8(ascii: "?")), request.target.contains("query=") else { return nil }
            guard let query = Self.parameter("query", in: request) else { return nil }
            document = query
        } else if request.method == .post, let type = request.headers["Content-Type"], Self.isGraphQLType(type) {
            document = String(decoding: request.body, as: UTF8.self)
        } else {
            return nil
        }
        let variables = Self.parameter("variables", in: request).flatMap { $0.isEmpty ? nil : $0 }.map { text in
            (try? JSONParser.parse(text)) ?? .string(text)
        }
        guard
            let operation = GraphQLOperation(
                query: document, operationName: Self.parameter("operationName", in: request), variables: variables)
        else { return nil }
        self.operations = [operation]
        self.isBatch = false
    }

    /// The JSON-body form: an object with a string `query`, or a non-empty array of them (a batch).
    public init?(json: JSONValue) {
        switch json {
        case .object:
            guard let operation = GraphQLOperation(json: json) else { return nil }
            operations = [operation]
            isBatch = false
        case .array(let elements):
            guard !elements.isEmpty, elements.count <= Self.batchLimit else { return nil }
            var operations: [GraphQLOperation] = []
            operations.reserveCapacity(elements.count)
            for element in elements {
                guard let operation = GraphQLOperation(json: element) else { return nil }
                operations.append(operation)
            }
            self.operations = operations
            isBatch = true
        default:
            return nil
        }
    }

    /// How people read it: `query GetUser`, or `batch: query A, mutation B`.
    public var label: String {
        guard isBatch else { return operations[0].label }
        return "batch: " + operations.map(\.label).joined(separator: ", ")
    }

    /// The request in the form it is compared in: one operation's `matchingForm`, or an array of them.
    public var matchingForm: JSONValue {
        isBatch ? .array(operations.map(\.matchingForm)) : operations[0].matchingForm
    }

    /// `application/graphql`, with or without parameters, in any case (not `application/graphql-response+json`,
    /// which is JSON). Compared byte by byte: this runs for every POST.
    static func isGraphQLType(_ type: String) -> Bool {
        let expected = "application/graphql".utf8
        let bytes = type.utf8
        guard bytes.count >= expected.count else { return false }
        var index = bytes.startIndex
        for byte in expected {
            let actual = bytes[index]
            // ASCII letters compared without case.
            guard actual == byte || (actual >= 0x41 && actual <= 0x5A && actual | 0x20 == byte) else { return false }
            index = bytes.index(after: index)
        }
        return index == bytes.endIndex || bytes[index] == UInt8(ascii: ";") || bytes[index] == UInt8(ascii: " ")
    }

    /// The first value of the query parameter `name`, percent-decoded (`+` is a space).
    private static func parameter(_ name: String, in request: HTTP.Request) -> String? {
        for item in request.queryItems where item.name.removingPercentEncodingLeniently() == name {
            return (item.value ?? "").removingPercentEncodingLeniently()
        }
        return nil
    }
}
