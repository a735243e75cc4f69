import KakapoHTTP

/// A parsed route pattern such as `/users/:id/comments/*` or `/files/**`.
///
/// Segments are constants, `:name` parameters, `*` (any one segment) and `**` (the rest of the path,
/// last only). Leading, trailing and doubled slashes do not matter.
public struct RoutePattern: Hashable, Sendable, CustomStringConvertible {
    public enum Segment: Hashable, Sendable {
        case constant(String)
        case parameter(String)
        case wildcard
        case catchAll
    }

    /// The pattern as the user wrote it.
    public let text: String
    public let segments: [Segment]

    /// Parses `text`; throws `RouterError.invalidPattern` naming the pattern and the problem.
    public init(_ text: String) throws(RouterError) {
        self.text = text
        var segments: [Segment] = []
        let parts = text.split(separator: "/", omittingEmptySubsequences: true)
        for (offset, part) in parts.enumerated() {
            if part == "**" {
                guard offset == parts.count - 1 else {
                    throw RouterError.invalidPattern(text, "'**' must be the last segment")
                }
                segments.append(.catchAll)
            } else if part == "*" {
                segments.append(.wildcard)
            } else if part.hasPrefix(":") {
                let name = String(part.dropFirst())
                guard !name.isEmpty else {
                    throw RouterError.invalidPattern(text, "a parameter needs a name after ':'")
                }
                guard !segments.contains(.parameter(name)) else {
                    throw RouterError.invalidPattern(text, "parameter ':\(name)' appears twice")
                }
                segments.append(.parameter(name))
            } else {
                if part.contains("?") || part.contains("#") {
                    throw RouterError.invalidPattern(text, "a pattern is a path; leave out '?' and '#'")
                }
                segments.append(.constant(String(part).removingPercentEncodingLeniently(plusAsSpace: false)))
            }
        }
        self.segments = segments
    }

    public var description: String { text }

    /// The pattern with parameter names erased: two patterns with the same shape route the same paths.
    var shape: [Segment] {
        segments.map { segment in
            if case .parameter = segment { return .parameter("") }
            return segment
        }
    }
}
