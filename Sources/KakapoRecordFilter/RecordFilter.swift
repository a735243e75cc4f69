import KakapoHTTP
import KakapoUpstream

/// Which requests the modes that record keep out of the cassette (`--record-only`, `--passthrough`): such a
/// request is forwarded and answered live (`X-Kakapo-Source: passthrough`), but never recorded and never
/// answered from the cassette. Routes and the Store still answer first; the replay modes ignore the filter.
///
/// A request is kept out when it matches a `passthrough` pattern, or when `recordOnly` has patterns and it
/// matches none of them. Patterns are matched against the URL as it goes upstream: the request's own origin
/// in forward mode (absolute-form requests and decrypted tunnels), the `--upstream` URL (its host, and its
/// path prefix before the request's path) in reverse mode; the path as libcurl sends it, its dot-segments
/// resolved, and also as an upstream that resolves `%2e` may read it (`PathGlob.readings(of:)`).
public struct RecordFilter: Sendable {
    /// Requests to record; when there is any, every other request passes through unrecorded.
    public let recordOnly: [Pattern]
    /// Requests that pass through unrecorded, whatever `recordOnly` says.
    public let passthrough: [Pattern]
    /// True when there is no pattern at all: the filter keeps nothing out (checked first, on every request).
    public let isEmpty: Bool

    /// The most patterns a filter takes, both lists together (each is tried on every request it sees).
    public static let patternLimit = 256

    /// A filter that keeps nothing out.
    public init() {
        self.init(checked: [], [])
    }

    /// A filter of these patterns (see `Pattern.init(_:)`); throws for a pattern that is not one, or for more
    /// than `patternLimit` patterns.
    public init(recordOnly: [String] = [], passthrough: [String] = []) throws(RecordFilter.PatternError) {
        guard recordOnly.count + passthrough.count <= Self.patternLimit else {
            throw PatternError(
                pattern: "",
                reason: "at most \(Self.patternLimit) patterns are allowed, not \(recordOnly.count + passthrough.count)"
            )
        }
        var kept: [Pattern] = []
        for text in recordOnly { kept.append(try Pattern(text)) }
        var passed: [Pattern] = []
        for text in passthrough { passed.append(try Pattern(text)) }
        self.init(checked: kept, passed)
    }

    private init(checked recordOnly: [Pattern], _ passthrough: [Pattern]) {
        self.recordOnly = recordOnly
        self.passthrough = passthrough
        isEmpty = recordOnly.isEmpty && passthrough.isEmpty
    }

    /// Whether `request` stays out of the cassette: forwarded to where it goes (its origin, else `upstream`)
    /// and answered live. False when it goes nowhere (no origin and no upstream).
    package func passesThrough(_ request: HTTP.Request, upstream: UpstreamURL?) -> Bool {
        guard !isEmpty else { return false }
        let destination: (scheme: String, host: String, port: Int)?
        let path: String
        if let origin = request.origin {
            destination = RequestOrigin.parts(of: origin)
            path = request.target
        } else if let upstream {
            destination = RequestOrigin.parts(of: upstream.description)
            path = upstream.pathPrefix + request.target
        } else {
            return false
        }
        guard let destination else { return false }
        // Kept out when any way the upstream may read the path keeps it out.
        return Pattern.PathGlob.readings(of: path).contains { segments in
            let target = Pattern.Target(
                scheme: destination.scheme, host: destination.host.lowercased(), port: destination.port,
                segments: segments)
            if passthrough.contains(where: { $0.matches(target) }) { return true }
            return !recordOnly.isEmpty && !recordOnly.contains { $0.matches(target) }
        }
    }
}

extension RecordFilter {
    /// A pattern that is not one, with the reason.
    public struct PatternError: Error, Sendable, CustomStringConvertible {
        /// The pattern as given.
        public let pattern: String
        /// What is wrong with it.
        public let reason: String

        public var description: String {
            if pattern.isEmpty { return reason }
            // A pattern too long to be one is shown by its start.
            let shown = pattern.count > 100 ? pattern.prefix(100) + "..." : pattern
            return "\"\(shown)\": \(reason)"
        }
    }
}
