import KakapoHTTP

/// The frozen, immutable routing table of one router: a trie keyed by path segments, like RoutingKit's.
/// Per node: constant children by name, one parameter child, one `*` child and the routes of a trailing
/// `**`. A constant beats a parameter beats `*` beats `**`, whatever the registration order; lookup
/// costs the depth of the path, not the number of routes.
struct RouteTrie: Sendable {
    struct Entry: Sendable {
        let method: HTTP.Method?
        let pattern: RoutePattern
        let handler: RouteHandler
    }

    final class Node: Sendable {
        // Written only while the trie is built, before it is shared; read-only afterwards.
        nonisolated(unsafe) var constants: [String: Node] = [:]
        nonisolated(unsafe) var parameter: Node?
        nonisolated(unsafe) var wildcard: Node?
        nonisolated(unsafe) var catchAll: [Entry] = []
        nonisolated(unsafe) var entries: [Entry] = []
    }

    private let root = Node()

    /// Builds the trie; throws when a pattern is registered twice for the same method and shape.
    init(_ entries: [Entry]) throws(RouterError) {
        for entry in entries {
            var node = root
            for segment in entry.pattern.segments {
                switch segment {
                case .constant(let name):
                    if let next = node.constants[name] {
                        node = next
                    } else {
                        let next = Node()
                        node.constants[name] = next
                        node = next
                    }
                case .parameter:
                    if node.parameter == nil { node.parameter = Node() }
                    node = node.parameter!
                case .wildcard:
                    if node.wildcard == nil { node.wildcard = Node() }
                    node = node.wildcard!
                case .catchAll:
                    break
                }
            }
            let isCatchAll = entry.pattern.segments.last == .catchAll
            let existing = isCatchAll ? node.catchAll : node.entries
            if let clash = existing.first(where: { $0.method == entry.method }) {
                let method = entry.method?.rawValue ?? "any method"
                throw RouterError(
                    code: .conflict,
                    message:
                        "route \(method) \"\(entry.pattern)\" conflicts with \"\(clash.pattern)\": both match the same paths"
                )
            }
            if isCatchAll { node.catchAll.append(entry) } else { node.entries.append(entry) }
        }
    }

    /// The route for `method` and the path `segments`, with what it captured.
    func match(method: HTTP.Method, segments: [Substring]) -> (Entry, RouteParameters)? {
        var captured: [String] = []
        guard let (entry, rest) = search(root, segments[...], method: method, captured: &captured) else { return nil }
        var values: [String: String] = [:]
        var position = 0
        for segment in entry.pattern.segments {
            if case .parameter(let name) = segment {
                values[name] = captured[position]
            }
            if case .parameter = segment { position += 1 } else if case .wildcard = segment { position += 1 }
        }
        return (entry, RouteParameters(values: values, catchAll: rest))
    }

    /// Depth-first with backtracking, in priority order; `captured` holds parameter and `*` values.
    private func search(
        _ node: Node, _ segments: ArraySlice<Substring>, method: HTTP.Method, captured: inout [String]
    ) -> (Entry, [String])? {
        guard let segment = segments.first else {
            if let entry = pick(node.entries, method) { return (entry, []) }
            if let entry = pick(node.catchAll, method) { return (entry, []) }
            return nil
        }
        let rest = segments.dropFirst()
        let decoded = String(segment).removingPercentEncodingLeniently(plusAsSpace: false)
        if let next = node.constants[decoded], let found = search(next, rest, method: method, captured: &captured) {
            return found
        }
        for next in [node.parameter, node.wildcard].compactMap({ $0 }) {
            captured.append(decoded)
            if let found = search(next, rest, method: method, captured: &captured) { return found }
            captured.removeLast()
        }
        if let entry = pick(node.catchAll, method) {
            return (entry, segments.map { String($0).removingPercentEncodingLeniently(plusAsSpace: false) })
        }
        return nil
    }

    /// The entry for `method`, then one for any method; HEAD is served by GET when it has no route.
    private func pick(_ entries: [Entry], _ method: HTTP.Method) -> Entry? {
        if entries.isEmpty { return nil }
        if let exact = entries.first(where: { $0.method == method }) { return exact }
        if let any = entries.first(where: { $0.method == nil }) { return any }
        if method == .head { return entries.first { $0.method == .get } }
        return nil
    }
}
