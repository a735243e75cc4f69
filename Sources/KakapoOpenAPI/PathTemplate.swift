import KakapoHTTP
import OpenAPIKit

/// One `paths` key of a spec (`/users/{id}`, `/files/{name}.{ext}`), matched segment by segment against
/// a recorded path. Literal text is compared with the percent-decoded segment; a `{name}` takes one or
/// more characters and never a `/`.
struct PathTemplate: Sendable {
    enum Piece: Equatable, Sendable {
        case literal(String)
        case variable(String)
    }

    let path: OpenAPIKit.OpenAPI.Path
    let segments: [[Piece]]

    init(_ path: OpenAPIKit.OpenAPI.Path) {
        self.path = path
        self.segments = path.components.map(Self.pieces)
    }

    /// The text of the template as written in the spec.
    var text: String { path.rawValue }

    static func pieces(of segment: String) -> [Piece] {
        var pieces: [Piece] = []
        var literal = ""
        var rest = Substring(segment)
        while let open = rest.firstIndex(of: "{"), let close = rest[open...].firstIndex(of: "}") {
            literal += rest[..<open]
            if !literal.isEmpty { pieces.append(.literal(literal)) }
            literal = ""
            pieces.append(.variable(String(rest[rest.index(after: open)..<close])))
            rest = rest[rest.index(after: close)...]
        }
        literal += rest
        if !literal.isEmpty { pieces.append(.literal(literal)) }
        return pieces
    }

    /// The parameters bound when `path` fits the template, nil when it does not.
    func match(_ path: String) -> [String: String]? {
        let parts = path.split(separator: "/", omittingEmptySubsequences: true).map {
            String($0).removingPercentEncoding ?? String($0)
        }
        guard parts.count == segments.count else { return nil }
        var bound: [String: String] = [:]
        for (pieces, part) in zip(segments, parts) {
            guard Self.match(pieces[...], Substring(part), into: &bound) else { return nil }
        }
        return bound
    }

    private static func match(_ pieces: ArraySlice<Piece>, _ text: Substring, into bound: inout [String: String])
        -> Bool
    {
        guard let first = pieces.first else { return text.isEmpty }
        switch first {
        case .literal(let literal):
            guard text.hasPrefix(literal) else { return false }
            return match(pieces.dropFirst(), text.dropFirst(literal.count), into: &bound)
        case .variable(let name):
            // Shortest value first, widened one character at a time until the rest of the segment fits.
            guard !text.isEmpty else { return false }
            var end = text.index(after: text.startIndex)
            while true {
                var attempt = bound
                attempt[name] = String(text[..<end])
                if match(pieces.dropFirst(), text[end...], into: &attempt) {
                    bound = attempt
                    return true
                }
                if end == text.endIndex { break }
                end = text.index(after: end)
            }
            return false
        }
    }

    /// Concrete paths win over templated ones (OpenAPI's rule): compared segment by segment, a segment
    /// without variables beats one with them.
    func isMoreSpecific(than other: PathTemplate) -> Bool {
        for (mine, theirs) in zip(segments, other.segments) {
            let mineLiteral = Self.isLiteral(mine)
            if mineLiteral != Self.isLiteral(theirs) { return mineLiteral }
        }
        return false
    }

    private static func isLiteral(_ pieces: [Piece]) -> Bool {
        !pieces.contains { if case .variable = $0 { true } else { false } }
    }
}
