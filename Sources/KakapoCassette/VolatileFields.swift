import KakapoJSON

/// The places of one interaction whose values change from call to call (a cassette's `volatile` member:
/// `{"request": ["query ts", "body /nonce"], "response": ["body /id", "header etag"]}`), learned by
/// `--learn-volatile` or written by hand. Matching ignores the request's; `verify` does not count the
/// response's as drift.
public struct VolatileFields: Hashable, Sendable {
    /// One place: a query parameter, a header (any case) or a JSON pointer into the body.
    public enum Place: Hashable, Sendable, Comparable {
        case query(String)
        case header(String)
        case body(JSONPointer)

        /// Reads `query NAME`, `header NAME` or `body /pointer`.
        public init?(_ text: String) {
            guard let space = text.firstIndex(of: " ") else { return nil }
            let rest = String(text[text.index(after: space)...])
            guard !rest.isEmpty else { return nil }
            switch text[..<space] {
            case "query": self = .query(rest)
            case "header": self = .header(rest.lowercased())
            case "body":
                guard let pointer = JSONPointer(rest) else { return nil }
                self = .body(pointer)
            default: return nil
            }
        }

        /// Whether a cassette can hold this place: it reads back as itself (a name, a pointer that is not the
        /// whole body) and is 1 to 1024 bytes long. Learned places that are not are left out.
        public var isWritable: Bool {
            let text = self.text
            return (1...1024).contains(text.utf8.count) && Place(text) == self
        }

        /// `query NAME`, `header NAME` or `body /pointer`.
        public var text: String {
            switch self {
            case .query(let name): "query " + name
            case .header(let name): "header " + name
            case .body(let pointer): "body " + (pointer.components.isEmpty ? "" : pointer.description)
            }
        }

        public static func < (lhs: Place, rhs: Place) -> Bool { lhs.text < rhs.text }
    }

    public var request: [Place]
    public var response: [Place]

    /// The most places a side may hold (a cassette's `volatile` is refused past it).
    public static let limit = 256

    public init(request: [Place] = [], response: [Place] = []) {
        self.request = request
        self.response = response
    }

    public var isEmpty: Bool { request.isEmpty && response.isEmpty }

    /// Whether the request's query parameter `name` is volatile.
    func requestQuery(_ name: String) -> Bool { request.contains(.query(name)) }

    /// Whether `pointer` in the request's body is volatile, or lies under a volatile place.
    func requestBody(_ pointer: [String]) -> Bool { Self.holds(pointer, in: request) }

    /// Whether `pointer` in the response's body is volatile, or lies under a volatile place.
    public func responseBody(_ pointer: [String]) -> Bool { Self.holds(pointer, in: response) }

    /// Whether `pointer` is one of the body places of `places`, or lies under one.
    private static func holds(_ pointer: [String], in places: [Place]) -> Bool {
        places.contains { place in
            guard case .body(let volatile) = place else { return false }
            return pointer.starts(with: volatile.components)
        }
    }

    /// Whether the response's header `name` (any case) is volatile.
    public func responseHeader(_ name: String) -> Bool { response.contains(.header(name.lowercased())) }

    /// `{"request": [...], "response": [...]}`, each side left out when empty.
    var json: JSONValue {
        var object = JSONObject()
        if !request.isEmpty { object["request"] = .array(request.map { .string($0.text) }) }
        if !response.isEmpty { object["response"] = .array(response.map { .string($0.text) }) }
        return .object(object)
    }
}
