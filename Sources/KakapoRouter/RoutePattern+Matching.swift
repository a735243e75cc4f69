import KakapoHTTP

extension RoutePattern {
    /// What the pattern captures from `path` (a path without query), or nil when it does not match.
    /// Segments are compared percent-decoded, as the router compares them.
    public func match(path: String) -> RouteParameters? {
        let parts = path.split(separator: "/", omittingEmptySubsequences: true)
        var values: [String: String] = [:]
        for (offset, segment) in segments.enumerated() {
            switch segment {
            case .catchAll:
                return RouteParameters(values: values, catchAll: parts.dropFirst(offset).map(RoutePattern.decode))
            case _ where offset >= parts.count:
                return nil
            case .constant(let name):
                let part = parts[offset]
                guard part.utf8.contains(UInt8(ascii: "%")) ? RoutePattern.decode(part) == name : part == name else {
                    return nil
                }
            case .parameter(let name):
                values[name] = RoutePattern.decode(parts[offset])
            case .wildcard:
                break
            }
        }
        return parts.count == segments.count ? RouteParameters(values: values) : nil
    }

    private static func decode(_ part: Substring) -> String {
        String(part).removingPercentEncodingLeniently(plusAsSpace: false)
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
