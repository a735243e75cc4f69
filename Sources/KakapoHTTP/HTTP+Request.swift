extension HTTP {
    /// A complete HTTP request as Kakapo sees it: method, target (path and query as sent), headers and body,
    /// and the origin it was addressed to when the client named one (a forward proxy's requests).
    public struct Request: Hashable, Sendable {
        public var method: HTTP.Method
        /// The request target as sent: path plus an optional `?query`.
        public var target: String
        public var headers: HTTP.Headers
        public var body: [UInt8]
        /// The scheme and authority the request was addressed to, normalised by `RequestOrigin`
        /// (`https://api.example.com`, `http://localhost:8081`); nil when the client named none (a reverse
        /// proxy's requests, which all go to the one upstream).
        public var origin: String?

        public init(
            method: HTTP.Method, target: String, headers: HTTP.Headers = HTTP.Headers(), body: [UInt8] = [],
            origin: String? = nil
        ) {
            self.method = method
            self.target = target
            self.headers = headers
            self.body = body
            self.origin = origin
        }

        /// The origin followed by the target when the origin is known, else the target alone.
        public var url: String { (origin ?? "") + target }

        /// The path part of the target, without the query.
        public var path: String {
            // A byte scan: '?' is ASCII, and this runs several times per request.
            guard let mark = target.utf8.firstIndex(of: UInt8(ascii: "?")) else { return target }
            return String(target[..<mark])
        }

        /// The raw query string after `?`, or nil when the target has none.
        public var query: String? {
            guard let mark = target.utf8.firstIndex(of: UInt8(ascii: "?")) else { return nil }
            return String(target[target.utf8.index(after: mark)...])
        }

        /// The query parameters in order, names and values percent-decoded (`+` is a space).
        public var decodedQueryItems: [QueryItem] {
            queryItems.map {
                QueryItem(
                    name: $0.name.removingPercentEncodingLeniently(),
                    value: $0.value?.removingPercentEncodingLeniently())
            }
        }

        /// The query parameters in order, split on `&` and `=`, still percent-encoded.
        public var queryItems: [QueryItem] { QueryItem.parse(query) }
    }
}

/// One `name=value` pair of a query string, kept percent-encoded as sent.
public struct QueryItem: Hashable, Sendable, Comparable {
    public var name: String
    public var value: String?

    public init(name: String, value: String?) {
        self.name = name
        self.value = value
    }

    public static func < (lhs: QueryItem, rhs: QueryItem) -> Bool {
        if lhs.name != rhs.name { return lhs.name < rhs.name }
        return (lhs.value ?? "") < (rhs.value ?? "")
    }

    /// Splits a raw query string into items; empty segments are skipped.
    public static func parse(_ query: String?) -> [QueryItem] {
        guard let query, !query.isEmpty else { return [] }
        return query.split(separator: "&", omittingEmptySubsequences: true).map { part in
            if let equals = part.firstIndex(of: "=") {
                return QueryItem(name: String(part[..<equals]), value: String(part[part.index(after: equals)...]))
            }
            return QueryItem(name: String(part), value: nil)
        }
    }
}
