/// What a proxy run did, printed at shutdown (design section 2).
public struct ProxySummary: Sendable {
    /// The cassette the run used, if any.
    public let cassettePath: String?
    /// The mode the run answered in (`once` resolved).
    public let mode: ProxyMode
    /// Answers by the layer that gave them.
    public let counts: [ResponseSource: Int]
    /// Interactions written to the cassette in this run.
    public let recorded: Int
    /// How many values were redacted from the recordings, by header, parameter or pointer.
    public let redacted: [String: Int]
    /// Every missed request as its line (`METHOD url LABEL: first difference (interaction N)`, where LABEL
    /// names a GraphQL operation, a JSON-RPC method or a gRPC call).
    public let misses: [String]
    /// Recorded interactions that were never played, as `#position METHOD url LABEL`.
    public let unused: [String]
    /// Set when the final save of the cassette failed; it says how many of the recordings are not in the
    /// file and where they are (the journal, or a file in the temporary folder).
    public let saveError: String?
    /// Recordings older than the maximum age that were replayed, as `#position METHOD url (recorded at)`.
    public var stale: [String] = []
    /// The maximum age, as given (`30d`), for messages.
    public var maximumAge: String?
    /// Requests answered in a mode that records but not recorded, by reason (`UnrecordedAnswers`).
    public var unrecorded: [String: Int] = [:]

    /// Every request answered.
    public var total: Int { counts.values.reduce(0, +) }

    /// `30d`, `12h`, `90m` or `45s` for an age in seconds.
    static func describeAge(_ seconds: Double) -> String {
        let whole = Int(seconds)
        for (unit, size) in [("d", 86_400), ("h", 3_600), ("m", 60)] where whole >= size && whole % size == 0 {
            return "\(whole / size)\(unit)"
        }
        return "\(whole)s"
    }

    /// The summary as lines for standard error (long lists shortened).
    public var text: String { text(complete: false) }

    /// The summary as lines; `complete` lists every miss and every unused interaction (strict mode).
    public func text(complete: Bool) -> String {
        let missLimit = complete ? Int.max : 50
        let unusedLimit = complete ? Int.max : 20
        var lines: [String] = []
        let parts = ResponseSource.allCases.compactMap { source -> String? in
            guard let count = counts[source], count > 0 else { return nil }
            return "\(count) \(source.rawValue)"
        }
        lines.append(
            "kakapo: \(total) request\(total == 1 ? "" : "s")"
                + (parts.isEmpty ? "" : " (" + parts.joined(separator: ", ") + ")"))
        let replayed = counts[.cassette, default: 0] + counts[.cassetteHead, default: 0]
        let missed = counts[.miss, default: 0]
        if let cassettePath {
            if mode.records {
                let interactions = "\(recorded) interaction\(recorded == 1 ? "" : "s")"
                // A failed final save never reads as a full one: the error below says what is where.
                lines.append(
                    saveError == nil
                        ? "recorded \(interactions) to \(cassettePath)"
                        : "answered \(interactions) to record, but not all of them reached \(cassettePath) (see the error below)"
                )
            }
            lines.append("replayed \(replayed), missed \(missed)")
        }
        let passed = counts[.passthrough, default: 0]
        if passed > 0 {
            lines.append(
                "\(passed) request\(passed == 1 ? "" : "s") passed through unrecorded (--record-only/--passthrough)")
        }
        if let line = UnrecordedAnswers.line(unrecorded) { lines.append(line) }
        if !redacted.isEmpty {
            let parts = redacted.sorted { $0.key < $1.key }.map { "\($0.key) ×\($0.value)" }
            lines.append("redacted: " + parts.joined(separator: ", "))
        }
        if let saveError { lines.append("error: the cassette could not be saved: \(saveError)") }
        if !stale.isEmpty {
            lines.append(
                "\(stale.count) stale recording\(stale.count == 1 ? " was" : "s were") replayed"
                    + (maximumAge.map { " (older than \($0))" } ?? "") + ":")
            for item in stale.prefix(unusedLimit) { lines.append("  stale: \(item)") }
            if stale.count > unusedLimit { lines.append("  ... and \(stale.count - unusedLimit) more") }
        }
        for miss in misses.prefix(missLimit) { lines.append("  miss: \(miss)") }
        if misses.count > missLimit { lines.append("  ... and \(misses.count - missLimit) more misses") }
        if mode == .replay || mode == .new, !unused.isEmpty, total > 0 {
            lines.append("\(unused.count) recorded interaction\(unused.count == 1 ? " was" : "s were") never used:")
            for item in unused.prefix(unusedLimit) { lines.append("  unused: \(item)") }
            if unused.count > unusedLimit { lines.append("  ... and \(unused.count - unusedLimit) more") }
        }
        return lines.joined(separator: "\n")
    }
}
