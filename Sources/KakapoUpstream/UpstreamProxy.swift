import Foundation
import KakapoHTTP

/// A proxy that upstream requests go through (`--upstream-proxy`, `HTTPS_PROXY`): `http://` or `https://`,
/// with optional credentials (`user:password@`, percent-decoded). The credentials are kept apart from the
/// URL: `description` and every message show them as `***`, and libcurl gets them through their own
/// options, never in a URL it could print.
public struct UpstreamProxy: Sendable, Equatable, CustomStringConvertible {
    /// `http` or `https` (TLS to the proxy itself).
    public let scheme: String
    /// The proxy's host, without brackets for IPv6.
    public let host: String
    public let port: Int
    /// The user name, percent-decoded; nil without credentials.
    public let username: String?
    /// The password, percent-decoded; nil without credentials.
    public let password: String?

    /// The longest proxy URL accepted, in bytes.
    static let maximumLength = 4_096

    /// Parses `http(s)://[user[:password]@]host[:port][/]`; a URL with no scheme (`proxy.corp:3128`, as
    /// environment variables often hold) is `http://`. The port defaults to 80 for `http` and 443 for
    /// `https`. Throws `invalidURL` with a message that shows the credentials as `***`.
    public init(parsing text: String) throws(UpstreamError) {
        let shown = UpstreamProxy.redacting(text)
        func invalid(_ why: String) -> UpstreamError {
            UpstreamError(code: .invalidURL, message: "the upstream proxy \"\(shown)\" \(why)")
        }
        guard text.utf8.count <= UpstreamProxy.maximumLength else {
            throw invalid("is longer than \(UpstreamProxy.maximumLength) bytes")
        }
        var rest = Substring(text.trimmingCharacters(in: .whitespaces))
        var scheme = "http"
        if let separator = rest.range(of: "://") {
            scheme = rest[..<separator.lowerBound].lowercased()
            rest = rest[separator.upperBound...]
        }
        guard scheme == "http" || scheme == "https" else {
            throw invalid("must be an http:// or https:// URL (SOCKS proxies are not supported)")
        }
        if let slash = rest.firstIndex(of: "/") {
            guard rest[slash...] == "/" else { throw invalid("must not have a path") }
            rest = rest[..<slash]
        }
        var username: String?
        var password: String?
        if let at = rest.lastIndex(of: "@") {
            let credentials = rest[..<at]
            rest = rest[rest.index(after: at)...]
            let colon = credentials.firstIndex(of: ":")
            let user = credentials[..<(colon ?? credentials.endIndex)]
            let secret = colon.map { credentials[credentials.index(after: $0)...] } ?? ""
            guard let decodedUser = String(user).removingPercentEncoding,
                let decodedSecret = String(secret).removingPercentEncoding
            else { throw invalid("has credentials with an invalid percent-encoding") }
            username = decodedUser
            password = decodedSecret
        }
        guard let (host, port) = RequestOrigin.splitAuthority(rest),
            RequestOrigin.make(scheme: scheme, host: host, port: port) != nil
        else { throw invalid("needs a host (http://host:port)") }
        self.scheme = scheme
        self.host = host.lowercased()
        self.port = port ?? (scheme == "https" ? 443 : 80)
        self.username = username
        self.password = password
    }

    /// The proxy's URL without credentials, as libcurl gets it: `http://proxy.corp:3128`.
    public var url: String {
        scheme + "://" + (host.contains(":") ? "[\(host)]" : host) + ":" + String(port)
    }

    /// The URL with the credentials as `***` (`http://***@proxy.corp:3128`): what logs and errors show.
    public var description: String {
        username == nil ? url : scheme + "://***@" + String(url.dropFirst(scheme.count + 3))
    }

    /// Whether the proxy has credentials.
    public var hasCredentials: Bool { username != nil }

    /// The `Proxy-Authorization` value for the credentials (`Basic dXNlcjpwYXNz`); nil without them.
    package var basicAuthorization: String? {
        guard let username else { return nil }
        return "Basic " + Data((username + ":" + (password ?? "")).utf8).base64EncodedString()
    }

    /// `text` with whatever stands between `://` (or the start) and the last `@` before the host replaced by
    /// `***`: for messages about a URL that may not parse.
    static func redacting(_ text: String) -> String {
        let start = text.range(of: "://")?.upperBound ?? text.startIndex
        let end = text[start...].firstIndex(of: "/") ?? text.endIndex
        guard let at = text[start..<end].lastIndex(of: "@") else { return String(text.prefix(200)) }
        return String((text[..<start] + "***" + text[at...]).prefix(200))
    }
}
