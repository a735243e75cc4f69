/// The errors an upstream proxy causes, for libcurl's transfers and Kakapo's own tunnels alike: one
/// wording, with the proxy's URL shown without its credentials.
package enum UpstreamProxyFailure {
    /// The proxy answered `status` instead of forwarding (407: its credentials are missing or wrong).
    /// `statusLine`, the proxy's status line when known, gives the reason phrase.
    package static func refused(_ proxy: UpstreamProxy, status: Int, statusLine: String) -> UpstreamError {
        let parts = statusLine.split(separator: " ", maxSplits: 2)
        var phrase = parts.count == 3 && parts[1] == Substring(String(status)) ? String(parts[2]) : ""
        if phrase.isEmpty { phrase = status == 407 ? "Proxy Authentication Required" : "" }
        let printable = String(phrase.unicodeScalars.filter { $0.value >= 0x20 && $0.value < 0x7F }.prefix(100))
        let answer = printable.isEmpty ? String(status) : "\(status) \(printable)"
        let hint =
            status == 407 || status == 401
            ? (proxy.hasCredentials
                ? " (are the proxy's credentials right?)"
                : " (it wants credentials: http://USER:PASSWORD@host:port)")
            : ""
        return UpstreamError(
            code: .upstreamProxyRefused, message: "the upstream proxy \(proxy) refused with \(answer)\(hint)")
    }

    /// The proxy cannot be reached (refused connection, unknown name, failed TLS); `reason` says how.
    package static func unreachable(_ proxy: UpstreamProxy, reason: String) -> UpstreamError {
        UpstreamError(
            code: .upstreamProxyUnreachable, message: "cannot reach the upstream proxy \(proxy): \(reason)")
    }
}
