import KakapoHTTP

extension RoutePattern {
    /// What the pattern captures from `path` (a path without query), or nil when it does not match.
    /// Segments are compared percent-decoded, as the router compares them.
    public func match(path: String) -> RouteParameters? {
        let parts = path.split(separator: "/", omittingEmptySubsequences: true).map {
            String($0).removingPercentEncodingLeniently(plusAsSpace: false)
        }
        var values: [String: String] = [:]
        for (offset, segment) in segments.enumerated() {
            switch segment {
            case .catchAll:
                return RouteParameters(values: values, catchAll: Array(parts.dropFirst(offset)))
            case _ where offset >= parts.count:
                return nil
            case .constant(let name):
                guard parts[offset] == name else { return nil }
            case .parameter(let name):
                values[name] = parts[offset]
            case .wildcard:
                break
            }
        }
        return parts.count == segments.count ? RouteParameters(values: values) : nil
    }

    /// How the router ranks this pattern against others that match the same path: at the first segment
    /// where two patterns differ, a constant beats a parameter beats `*` beats the end of the pattern
    /// beats `**`. Compare with `lexicographicallyPrecedes` (higher ranks first).
    public var precedence: [Int] {
        segments.map { segment in
            switch segment {
            case .constant: return 4
            case .parameter: return 3
            case .wildcard: return 2
            case .catchAll: return 0
            }
        } + [1]
    }
}
