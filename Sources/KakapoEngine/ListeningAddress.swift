import KakapoHTTP

/// Where a client connection reached Kakapo: the host it was told to listen on and the local address of
/// the connection (its IP and the listening port). Answers whether a host named in a request is Kakapo
/// itself, so a forward proxy never forwards to itself (a request that came back through the proxy would
/// arrive from loopback and reach the admin API), and whether a `Host` is one a browser could only send
/// to Kakapo (not a DNS-rebinding name).
package struct ListeningAddress: Sendable {
    /// The host the server was configured to bind (`127.0.0.1`, `0.0.0.0`, `localhost`), lower case.
    let configuredHost: String
    /// The IP address of this end of the connection, as text, without brackets; nil when unknown.
    let localIP: String?
    /// The port the server listens on.
    let port: Int?
    /// Kakapo's other listening ports (the admin listener's, seen from the proxy port, and the other way):
    /// a request or tunnel to one of them is to Kakapo itself too.
    package var otherPorts: [Int] = []

    /// `localIP` and `port` are those of this end of the connection (nil when unknown).
    package init(configuredHost: String, localIP: String?, port: Int?) {
        self.configuredHost = ListeningAddress.bare(configuredHost)
        self.localIP = localIP.map { ListeningAddress.bare($0) }
        self.port = port
    }

    /// Whether `host` names Kakapo's own machine: a loopback name or address, the wildcard addresses,
    /// the configured host or the address the connection arrived on.
    func namesThisMachine(_ host: String) -> Bool {
        let host = ListeningAddress.bare(host)
        return ListeningAddress.isLoopbackName(host) || host == "0.0.0.0" || host == "::" || host == configuredHost
            || host == localIP
    }

    /// Whether `host:port` (a `CONNECT` target or an absolute-form request's authority) is Kakapo's own
    /// listening address.
    package func isSelf(host: String, port: Int) -> Bool {
        guard port == self.port || otherPorts.contains(port) else { return false }
        return namesThisMachine(host)
    }

    /// Whether a `Host` header value (`localhost:8080`, `[::1]:8080`, `127.0.0.1`) names a loopback host or
    /// the listening address, whatever its port: what a browser sends only to a page served from here.
    func acceptsHostHeader(_ value: String) -> Bool {
        guard let (host, _) = RequestOrigin.splitAuthority(value) else { return false }
        let bare = ListeningAddress.bare(host)
        return ListeningAddress.isLoopbackName(bare) || bare == configuredHost || bare == localIP
    }

    /// The `Origin` values of pages served by Kakapo itself: http(s) on a loopback name or the listening
    /// address, on the listening port.
    func isOwnOrigin(_ origin: String) -> Bool {
        guard let port, let (_, host, given) = RequestOrigin.parts(of: origin), given == port else { return false }
        let bare = Self.bare(host)
        return bare == "localhost" || bare == "127.0.0.1" || bare == "::1" || bare == configuredHost || bare == localIP
    }

    /// Loopback by name or address: `localhost` and its subdomains, `127.0.0.0/8`, `::1` and IPv4-mapped
    /// `::ffff:127.x.x.x`. Expects a lower-case host without brackets.
    package static func isLoopbackName(_ host: String) -> Bool {
        if host == "localhost" || host.hasSuffix(".localhost") || host == "::1" { return true }
        let v4 = host.hasPrefix("::ffff:") ? String(host.dropFirst(7)) : host
        let parts = v4.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts[0] == "127"
            && parts.allSatisfy { part in
                !part.isEmpty && part.count <= 3 && part.allSatisfy { ("0"..."9").contains($0) }
            }
    }

    /// Whether a host as a user writes it (`LOCALHOST`, `[::1]`, `127.0.0.1.`) is loopback by
    /// `isLoopbackName`.
    package static func isLoopbackHost(_ host: String) -> Bool { isLoopbackName(bare(host)) }

    /// Lower case, without the brackets of an IPv6 literal and without a trailing dot.
    private static func bare(_ host: String) -> String {
        var host = host.lowercased()
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        if host.hasSuffix(".") { host.removeLast() }
        return host
    }

}
