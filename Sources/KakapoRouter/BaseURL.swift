import KakapoHTTP

/// Where a router applies: an optional host (with optional port) and a path prefix.
/// `http://api.test.com/v1` -> host `api.test.com`, prefix `/v1`; `/v1` -> any host, prefix `/v1`.
public struct BaseURL: Hashable, Sendable, CustomStringConvertible {
    public let host: String?
    public let port: Int?
    /// Path segments of the prefix.
    public let prefix: [String]

    /// Parses a base URL; throws when it has a query, a fragment or an unknown scheme.
    public init(_ text: String) throws(RouterError) {
        var rest = Substring(text)
        var host: String?
        var port: Int?
        if let separator = rest.range(of: "://") {
            let scheme = rest[..<separator.lowerBound].lowercased()
            guard scheme == "http" || scheme == "https" else {
                throw RouterError(
                    code: .invalidBaseURL, message: "invalid base URL \"\(text)\": use http:// or https://")
            }
            rest = rest[separator.upperBound...]
            let slash = rest.firstIndex(of: "/") ?? rest.endIndex
            let authority = rest[..<slash]
            rest = rest[slash...]
            let parsed = BaseURL.split(authority: authority)
            guard !parsed.host.isEmpty else {
                throw RouterError(code: .invalidBaseURL, message: "invalid base URL \"\(text)\": no host")
            }
            host = parsed.host
            port = parsed.port
        }
        guard !rest.contains("?"), !rest.contains("#") else {
            throw RouterError(code: .invalidBaseURL, message: "invalid base URL \"\(text)\": leave out '?' and '#'")
        }
        self.host = host
        self.port = port
        self.prefix = rest.split(separator: "/").map { String($0) }
    }

    /// Any host, no prefix.
    public static let any = try! BaseURL("")

    public var description: String {
        (host.map { "http://" + $0 + (port.map { ":\($0)" } ?? "") } ?? "") + "/" + prefix.joined(separator: "/")
    }

    /// How specific this base is: a host counts more than any prefix length.
    package var specificity: Int { (host == nil ? 0 : 10_000) + (port == nil ? 0 : 5_000) + prefix.count }

    /// The path after the prefix, or nil when the request is not under this base.
    package func relativePath(host requestHost: String?, path: String) -> String? {
        if let host {
            guard let requestHost else { return nil }
            let parsed = BaseURL.split(authority: Substring(requestHost))
            guard parsed.host.caseInsensitiveEquals(host) else { return nil }
            if let port, parsed.port != port { return nil }
        }
        if prefix.isEmpty { return path }
        let segments = path.split(separator: "/", omittingEmptySubsequences: true)
        guard segments.count >= prefix.count else { return nil }
        for (have, want) in zip(segments, prefix)
        where String(have).removingPercentEncodingLeniently(plusAsSpace: false) != want {
            return nil
        }
        return "/" + segments.dropFirst(prefix.count).joined(separator: "/")
    }

    static func split(authority: Substring) -> (host: String, port: Int?) {
        if authority.hasPrefix("["), let close = authority.firstIndex(of: "]") {
            let host = String(authority[authority.index(after: authority.startIndex)..<close])
            let after = authority[authority.index(after: close)...]
            return (host, after.hasPrefix(":") ? Int(after.dropFirst()) : nil)
        }
        if let colon = authority.lastIndex(of: ":") {
            return (String(authority[..<colon]), Int(authority[authority.index(after: colon)...]))
        }
        return (String(authority), nil)
    }
}
