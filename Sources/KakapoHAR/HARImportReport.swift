/// What an import changed so that the cassette replays to every client: one line per kind of change, with
/// how many responses it touched (`3 responses: content-encoding br dropped, body kept decoded`), in the
/// order the kinds were first met.
public struct HARImportReport: Sendable, Equatable {
    private var kinds: [String] = []
    private var counts: [String: Int] = [:]

    public init() {}

    /// Counts one response under `kind`.
    mutating func note(_ kind: String) {
        if counts[kind] == nil { kinds.append(kind) }
        counts[kind, default: 0] += 1
    }

    /// True when the import changed nothing.
    public var isEmpty: Bool { kinds.isEmpty }

    /// One line per kind of change: `N responses: what was done`.
    public var lines: [String] {
        kinds.map { kind in
            let count = counts[kind] ?? 0
            return "\(count) \(count == 1 ? "response" : "responses"): \(kind)"
        }
    }
}
