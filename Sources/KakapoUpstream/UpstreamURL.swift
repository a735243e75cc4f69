/// A parsed upstream base URL: scheme, authority (`host:port`) and an optional path prefix.
public struct UpstreamURL: Hashable, Sendable {
    /// `http`, `https`, or `h2c` (cleartext HTTP/2 with prior knowledge: sent as `http`).
    public let scheme: String
    public let authority: String
    public let pathPrefix: String

    /// The schemes an upstream may have.
    public static let schemes = ["http", "https", "h2c"]

    /// Parses `http://host[:port][/prefix]`, `https://...` or `h2c://...`; nil for anything else.
    public init?(_ string: String) {
        guard let separator = string.range(of: "://") else { return nil }
        let scheme = string[..<separator.lowerBound].lowercased()
        guard Self.schemes.contains(scheme) else { return nil }
        let rest = string[separator.upperBound...]
        let slash = rest.firstIndex(of: "/") ?? rest.endIndex
        let authority = String(rest[..<slash])
        guard !authority.isEmpty, !authority.contains("@"),
            !authority.contains(where: { $0 == " " || $0 == "?" || $0 == "#" })
        else { return nil }
        var prefix = String(rest[slash...])
        if prefix.contains("?") || prefix.contains("#") { return nil }
        while prefix.hasSuffix("/") { prefix.removeLast() }
        self.scheme = scheme
        self.authority = authority
        self.pathPrefix = prefix
    }

    /// Whether requests go as HTTP/2 from the first byte, without asking first (`h2c://`): the upstream
    /// must speak cleartext HTTP/2, as gRPC servers do.
    public var usesHTTP2PriorKnowledge: Bool { scheme == "h2c" }

    /// The scheme on the wire: `h2c` is cleartext `http`.
    public var transportScheme: String { usesHTTP2PriorKnowledge ? "http" : scheme }

    /// The full URL for a request target (`/path?query`), as libcurl takes it (`http://` for `h2c://`).
    public func url(for target: String) -> String {
        transportScheme + "://" + authority + pathPrefix + (target.hasPrefix("/") ? target : "/" + target)
    }

    /// Whether a request target's dot-segments (`..`, also spelled `%2e%2e`, with `/` also spelled `%2f`
    /// or `\\`) climb above its root, so that appended to the path prefix (`/api/v1` + `/../../x`) it would
    /// name a path outside the prefix once the upstream resolves them. False without a prefix.
    public func escapesPrefix(_ target: String) -> Bool {
        guard !pathPrefix.isEmpty else { return false }
        let path = Self.separatorsAndDotsDecoded(
            target.utf8.prefix { $0 != UInt8(ascii: "?") && $0 != UInt8(ascii: "#") })
        var depth = 0
        let dot = [UInt8(ascii: ".")]
        let dots = [UInt8(ascii: "."), UInt8(ascii: ".")]
        for segment in path.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false).dropFirst() {
            switch Array(segment) {
            case dot: continue
            case dots:
                depth -= 1
                if depth < 0 { return true }
            default: depth += 1
            }
        }
        return false
    }

    /// The path's bytes with `%2e` as `.` and `%2f`, `%5c` and `\\` as `/`, in any case: the spellings an
    /// upstream may resolve as dot-segments.
    package static func separatorsAndDotsDecoded(_ path: some Collection<UInt8>) -> [UInt8] {
        var decoded: [UInt8] = []
        decoded.reserveCapacity(path.count)
        var index = path.startIndex
        while index != path.endIndex {
            let byte = path[index]
            index = path.index(after: index)
            if byte == UInt8(ascii: "\\") {
                decoded.append(UInt8(ascii: "/"))
                continue
            }
            guard byte == UInt8(ascii: "%"), index != path.endIndex, path.index(after: index) != path.endIndex else {
                decoded.append(byte)
                continue
            }
            let high = path[index]
            let low = path[path.index(after: index)] | 0x20
            switch (high, low) {
            case (UInt8(ascii: "2"), UInt8(ascii: "e")): decoded.append(UInt8(ascii: "."))
            case (UInt8(ascii: "2"), UInt8(ascii: "f")), (UInt8(ascii: "5"), UInt8(ascii: "c")):
                decoded.append(UInt8(ascii: "/"))
            default:
                decoded.append(byte)
                continue
            }
            index = path.index(index, offsetBy: 2)
        }
        return decoded
    }

    /// The URL as given (`h2c://` kept), for messages.
    public var description: String { scheme + "://" + authority + pathPrefix }
}
