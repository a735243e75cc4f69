/// Origins (`scheme://host[:port]`) in the one spelling Kakapo stores and compares: scheme and host in
/// lower case, the scheme's default port left out, IPv6 hosts in brackets.
public enum RequestOrigin {
    /// The origin of `scheme` (`http` or `https`), `host` and `port`; nil for another scheme or an empty
    /// or ill-formed host.
    public static func make(scheme: String, host: String, port: Int?) -> String? {
        let scheme = scheme.lowercased()
        guard scheme == "http" || scheme == "https" else { return nil }
        var host = host.lowercased()
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty,
            host.utf8.allSatisfy({ byte in
                byte > 0x20 && byte < 0x7F && byte != UInt8(ascii: "/") && byte != UInt8(ascii: "@")
                    && byte != UInt8(ascii: "?") && byte != UInt8(ascii: "#")
            })
        else { return nil }
        if let port, !(1...65535).contains(port) { return nil }
        let shownHost = host.contains(":") ? "[\(host)]" : host
        let defaultPort = scheme == "https" ? 443 : 80
        guard let port, port != defaultPort else { return scheme + "://" + shownHost }
        return scheme + "://" + shownHost + ":" + String(port)
    }

    /// Splits `host[:port]` (the authority of a URL or a `CONNECT` target; IPv6 in brackets) into host
    /// and port; nil when it is not one.
    public static func splitAuthority(_ authority: some StringProtocol) -> (host: String, port: Int?)? {
        guard !authority.isEmpty, !authority.contains("@") else { return nil }
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { return nil }
            let host = String(authority[authority.index(after: authority.startIndex)..<close])
            let rest = authority[authority.index(after: close)...]
            if rest.isEmpty { return host.isEmpty ? nil : (host, nil) }
            guard rest.hasPrefix(":"), let port = Int(rest.dropFirst()) else { return nil }
            return host.isEmpty ? nil : (host, port)
        }
        guard let colon = authority.lastIndex(of: ":") else { return (String(authority), nil) }
        let host = String(authority[..<colon])
        guard !host.isEmpty, !host.contains(":"), let port = Int(authority[authority.index(after: colon)...]) else {
            return nil
        }
        return (host, port)
    }

    /// Splits an absolute URL (`http://host[:port]/path?query`, what a client sends a forward proxy) into
    /// its origin and its target (`/path?query`, `/` when the path is empty); nil when it is not one.
    public static func split(absoluteURL url: String) -> (origin: String, target: String)? {
        guard let (scheme, rest) = splitScheme(url) else { return nil }
        let end =
            rest.firstIndex { character in character == "/" || character == "?" || character == "#" } ?? rest.endIndex
        guard let (host, port) = splitAuthority(rest[..<end]),
            let origin = make(scheme: scheme, host: host, port: port)
        else { return nil }
        var target = String(rest[end...])
        if let fragment = target.firstIndex(of: "#") { target = String(target[..<fragment]) }
        if !target.hasPrefix("/") { target = "/" + target }
        return (origin, target)
    }

    /// The authority part of an origin (`api.example.com`, `localhost:8443`), as a `Host` header says it.
    public static func authority(of origin: String) -> String {
        guard let (_, rest) = splitScheme(origin) else { return origin }
        return String(rest)
    }

    /// The scheme, host (without brackets) and port of an origin or an absolute URL (`https://[::1]:8443/x`),
    /// the scheme's default port when none is written; nil when it is not an http(s) URL.
    public static func parts(of url: String) -> (scheme: String, host: String, port: Int)? {
        guard let (written, rest) = splitScheme(url) else { return nil }
        let scheme = written.lowercased()
        guard scheme == "http" || scheme == "https" else { return nil }
        let end =
            rest.firstIndex { character in character == "/" || character == "?" || character == "#" } ?? rest.endIndex
        guard let (host, port) = splitAuthority(rest[..<end]) else { return nil }
        return (scheme, host, port ?? (scheme == "https" ? 443 : 80))
    }

    /// `scheme` and what follows `://`; nil without `://`.
    private static func splitScheme(_ url: String) -> (String, Substring)? {
        guard let colon = url.firstIndex(of: ":") else { return nil }
        let rest = url[url.index(after: colon)...]
        guard rest.hasPrefix("//") else { return nil }
        return (String(url[..<colon]), rest.dropFirst(2))
    }
}
