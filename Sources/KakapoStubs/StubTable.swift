import KakapoHTTP
import KakapoRouter

/// An immutable, ordered set of routes, built whenever the routes change. Routes are tried most specific
/// first (a host or prefix before any host; at the first differing path segment a constant before a
/// parameter before `*` before `**`; a named method before any method), then in the order given; the
/// first whose method, path and `when` fit answers.
package struct StubTable: Sendable {
    package let stubs: [Stub]

    package init(_ stubs: [Stub]) {
        self.stubs = stubs.enumerated().sorted { a, b in
            let (x, y) = (a.element, b.element)
            if x.baseSpecificity != y.baseSpecificity { return x.baseSpecificity > y.baseSpecificity }
            if x.pattern.precedence != y.pattern.precedence {
                return y.pattern.precedence.lexicographicallyPrecedes(x.pattern.precedence)
            }
            if (x.method == nil) != (y.method == nil) { return x.method != nil }
            return a.offset < b.offset
        }.map(\.element)
    }

    package static let empty = StubTable([])

    package var isEmpty: Bool { stubs.isEmpty }

    /// The answer of the first route that takes `request`, or nil to pass it to the next layer; `recordedAt`
    /// says when the cassette's recording of the request was made (`{{recordedAt}}`), asked only by a template.
    package func answer(_ request: HTTP.Request, recordedAt: @escaping () -> String? = { nil }) -> StubAnswer? {
        guard !stubs.isEmpty else { return nil }
        let (host, path) = RouterRegistry.hostAndPath(request)
        var context: TemplateContext?
        for stub in stubs {
            guard let parameters = stub.match(method: request.method, host: host, path: path) else { continue }
            let current = context ?? TemplateContext(request: request, parameters: parameters, recordedAt: recordedAt)
            current.parameters = parameters
            context = current
            if let answer = stub.answer(current) { return answer }
        }
        return nil
    }
}
