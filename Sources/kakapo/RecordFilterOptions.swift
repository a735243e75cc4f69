import ArgumentParser
import Kakapo

/// Options that keep requests out of the cassette while recording (`--record-only`, `--passthrough`).
struct RecordFilterOptions: ParsableArguments {
    @Option(
        name: .customLong("record-only"),
        help: ArgumentHelp(
            "In the modes that record, record only requests matching this pattern (repeatable): HOST[:PORT][/PATH], e.g. api.example.com/v1/** or *.example.com (its subdomains, not example.com itself); * is one path segment, ** any number. Other requests are forwarded and answered live (X-Kakapo-Source: passthrough), never recorded nor replayed. The host is the request's own in forward mode (--proxy), the --upstream host otherwise. Replay modes (none) ignore it.",
            valueName: "pattern"))
    var recordOnly: [String] = []

    @Option(
        name: .customLong("passthrough"),
        help: ArgumentHelp(
            "In the modes that record, forward requests matching this pattern (same form as --record-only; repeatable) and answer them live, never recording them nor answering them from the cassette. Replay modes (none) ignore it.",
            valueName: "pattern"))
    var passthrough: [String] = []

    func validate() throws {
        _ = try filter()
    }

    /// The filter these options describe; a usage error naming the flag and the pattern when one is not one.
    private func filter() throws -> RecordFilter {
        for (flag, patterns) in [("--record-only", recordOnly), ("--passthrough", passthrough)] {
            for pattern in patterns {
                do {
                    _ = try RecordFilter.Pattern(pattern)
                } catch {
                    throw ValidationError("\(flag) \(error)")
                }
            }
        }
        do {
            return try RecordFilter(recordOnly: recordOnly, passthrough: passthrough)
        } catch {
            throw ValidationError("--record-only and --passthrough: \(error)")
        }
    }

    /// Sets the record filter of `configuration`.
    func apply(to configuration: inout ProxyConfiguration) {
        // validate() accepted the patterns.
        configuration.recordFilter = (try? filter()) ?? RecordFilter()
    }
}
