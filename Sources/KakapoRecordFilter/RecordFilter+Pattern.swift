import KakapoHTTP

extension RecordFilter {
    /// One `--record-only` or `--passthrough` pattern: `[http(s)://]HOST[:PORT][/PATH]`.
    ///
    /// - `HOST` is a name or address (`api.example.com`, `127.0.0.1`, `[::1]`), compared without regard to
    ///   case; `*.example.com` is every subdomain of example.com at any depth but not example.com itself (as
    ///   with `--intercept`), and `*` alone, or nothing before the path (`/health/**`), is any host.
    /// - `PORT`, when given, must be the port the request goes to (80 or 443 when its URL names none);
    ///   without it any port matches. A scheme, when given, must be the request's.
    /// - `PATH` is a glob over `/`-separated segments, matched against the path without the query, its
    ///   dot-segments resolved, with its escapes in the spelling matching uses (`%7E` is `~`): `*` is
    ///   exactly one segment, `**` any number of them, none included (`/v1/**` matches `/v1`, `/v1/` and
    ///   `/v1/users/1`); other segments match as written, and `*` may not stand inside one, nor may a
    ///   segment be `.` or `..`. Without a path every path matches.
    ///
    /// Matching costs at most the path's segments times the pattern's, with no backtracking blow-up.
    public struct Pattern: Sendable, Hashable, CustomStringConvertible {
        /// The pattern as given.
        public let description: String
        let scheme: String?
        let host: HostPattern
        let port: Int?
        /// The path's glob; nil when the pattern has no path (every path matches).
        let path: PathGlob?

        /// The longest pattern accepted, in bytes.
        public static let lengthLimit = 2048
        /// The most path segments a pattern may have.
        public static let segmentLimit = 64

        /// What a request is matched on: where it goes and one reading of the path there
        /// (`PathGlob.readings(of:)`).
        struct Target {
            let scheme: String
            /// In lower case, without brackets.
            let host: String
            let port: Int
            let segments: [Substring]
        }

        /// Parses `text`; throws saying what is wrong with it.
        public init(_ text: String) throws(RecordFilter.PatternError) {
            func failure(_ reason: String) -> RecordFilter.PatternError { .init(pattern: text, reason: reason) }
            guard !text.isEmpty else { throw failure("a pattern may not be empty: give a host, a path or both") }
            guard text.utf8.count <= Self.lengthLimit else {
                throw failure("a pattern may be at most \(Self.lengthLimit) bytes long, not \(text.utf8.count)")
            }
            if text.unicodeScalars.contains(where: { $0.value <= 0x20 || $0.value >= 0x7F }) {
                throw failure(
                    "spaces, controls and non-ASCII characters cannot be part of a pattern: percent-encode them")
            }
            if text.contains("?") || text.contains("#") {
                throw failure("a pattern matches hosts and paths, never a query or a fragment: leave out ? and #")
            }
            var rest = Substring(text)
            if let separator = rest.range(of: "://") {
                let scheme = rest[..<separator.lowerBound].lowercased()
                guard scheme == "http" || scheme == "https" else {
                    throw failure("the scheme may be http or https, not \"\(scheme)\"")
                }
                self.scheme = scheme
                rest = rest[separator.upperBound...]
            } else {
                self.scheme = nil
            }
            let slash = rest.firstIndex(of: "/") ?? rest.endIndex
            let authority = rest[..<slash]
            if authority.isEmpty {
                guard slash != rest.endIndex else { throw failure("a pattern needs a host, a path or both") }
                host = .any
                port = nil
            } else {
                guard let (name, port) = RequestOrigin.splitAuthority(authority) else {
                    throw failure("\"\(authority)\" is not a host with an optional port (api.example.com:8443)")
                }
                if let port, !(1...65535).contains(port) {
                    throw failure("the port must be from 1 to 65535, not \(port)")
                }
                self.port = port
                host = try Self.host(name.lowercased(), failure: failure)
            }
            path = slash == rest.endIndex ? nil : try PathGlob(rest[slash...], failure: failure)
            description = text
        }

        private static func host(_ name: String, failure: (String) -> RecordFilter.PatternError) throws(RecordFilter
            .PatternError) -> HostPattern
        {
            if name == "*" { return .any }
            let exact = name.hasPrefix("*.") ? String(name.dropFirst(2)) : name
            let valid =
                !exact.isEmpty
                && exact.utf8.allSatisfy { byte in
                    switch byte {
                    case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                        UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: ":"):
                        return true
                    default:
                        return false
                    }
                }
            guard valid else {
                throw failure(
                    "\"\(name)\" is not a host: give a name or address (api.example.com, 127.0.0.1, [::1]), *.example.com for its subdomains or * for any host"
                )
            }
            return HostPattern(name: name)
        }

        /// Whether a request going to `target` matches.
        func matches(_ target: Target) -> Bool {
            if let scheme, scheme != target.scheme { return false }
            if let port, port != target.port { return false }
            guard host.matches(target.host) else { return false }
            return path?.matches(target.segments) ?? true
        }
    }
}
