/// A parsed upstream base URL: scheme, authority (`host:port`) and an optional path prefix.
public struct UpstreamURL: Hashable, Sendable {
    public let scheme: String
    public let authority: String
    public let pathPrefix: String

    /// Parses `http://host[:port][/prefix]` or `https://...`; nil for anything else.
    public init?(_ string: String) {
        guard let separator = string.range(of: "://") else { return nil }
        let scheme = string[..<separator.lowerBound].lowercased()
        guard scheme == "http" || scheme == "https" else { return nil }
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

    /// The full URL for a request target (`/path?query`).
    public func url(for target: String) -> String {
        scheme + "://" + authority + pathPrefix + (target.hasPrefix("/") ? target : "/" + target)
    }

    public var description: String { scheme + "://" + authority + pathPrefix }
}
