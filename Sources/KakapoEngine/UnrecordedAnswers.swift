import Synchronization

/// Requests answered in a mode that records but left out of the cassette, counted by reason for the shutdown
/// summary (`not recorded: 3 (2 larger than the response size limit, 1 broken off without
/// --record-broken-streams)`). Each place on the recording path that decides "not recorded" notes its reason
/// here, beside the line it logs; a request the record filter passes through has its own line in the summary.
package final class UnrecordedAnswers: Sendable {
    /// Why an answer was not recorded: a short phrase the summary shows after its count.
    package enum Reason: String, Sendable, CaseIterable {
        /// The body outgrew the most an answer may hold to be recorded (`UpstreamConfiguration.maximumResponseBytes`).
        case tooLarge = "larger than the response size limit"
        /// The upstream broke a stream off and `--record-broken-streams` was not given.
        case brokenOff = "broken off without --record-broken-streams"
        /// The upstream broke off an answer that cannot be recorded broken off (of announced length, or before
        /// anything came).
        case brokenUnrecordable = "broken off before a recordable part came"
        /// The client left a stream before its end and `--no-record-abandoned-streams` was given.
        case abandoned = "abandoned by the client, --no-record-abandoned-streams"
        /// The client left an answer that cannot be recorded in part (one of announced length).
        case abandonedUnrecordable = "abandoned by the client before the end of an answer of announced length"
        /// The cassette's reader would refuse the recording (a value no cassette can hold).
        case refused = "refused by the cassette reader"
    }

    private let counts = Mutex<[Reason: Int]>([:])

    package init() {}

    /// Counts one answer not recorded for `reason`.
    package func note(_ reason: Reason) {
        counts.withLock { $0[reason, default: 0] += 1 }
    }

    /// The counts so far, by the reason's phrase.
    package var byReason: [String: Int] {
        counts.withLock { counts in
            Dictionary(uniqueKeysWithValues: counts.map { ($0.key.rawValue, $0.value) })
        }
    }

    /// `counts` with `count` more for `reason` (counted elsewhere: the cassette's refusals).
    package static func adding(_ count: Int, _ reason: Reason, to counts: [String: Int]) -> [String: Int] {
        guard count > 0 else { return counts }
        var counts = counts
        counts[reason.rawValue, default: 0] += count
        return counts
    }

    /// The summary's line for `counts` (by reason): `not recorded: 3 (2 ..., 1 ...)`, the most frequent
    /// reason first; nil when nothing went unrecorded.
    package static func line(_ counts: [String: Int]) -> String? {
        let total = counts.values.reduce(0, +)
        guard total > 0 else { return nil }
        let parts = counts.filter { $0.value > 0 }.sorted { ($1.value, $0.key) < ($0.value, $1.key) }
            .map { "\($0.value) \($0.key)" }
        return "not recorded: \(total) (" + parts.joined(separator: ", ") + ")"
    }
}
