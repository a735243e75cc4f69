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
    /// The proxy's port: the URL's, else 80 for `http` and 443 for `https`.
    public let port: Int
    /// The user name, percent-decoded; nil without credentials.
    public let username: String?
    /// The password, percent-decoded; nil without credentials.
    public let password: String?

    /// The longest proxy URL accepted, in bytes.
    static let maximumLength = 4_096

    /// Parses `http(s)://[user[:password]@]host[:port][/]`; a URL with no scheme (`proxy.corp:3128`, as
    /// environment variables often hold) is `http://`. The port defaults to 80 for `http` and 443 for
    /// `https`. The credentials run to the last `@`, so a password may hold a raw `/`, `?`, `#`, `@` or `:`
    /// as well as percent-escapes. Throws `invalidURL` with a message that shows the credentials as `***`.
    public init(parsing text: String) throws(UpstreamError) {
        let shown = UpstreamProxy.redacting(text)
        func invalid(_ why: String) -> UpstreamError {
            UpstreamError(code: .invalidURL, message: "the upstream proxy \"\(shown)\" \(why)")
        }
        guard text.utf8.count <= UpstreamProxy.maximumLength else {
            throw invalid("is longer than \(UpstreamProxy.maximumLength) bytes")
        }
        let parts = UpstreamProxy.split(Substring(text.trimmingCharacters(in: .whitespaces)))
        let scheme = parts.scheme?.lowercased() ?? "http"
        guard scheme == "http" || scheme == "https" else {
            throw invalid("must be an http:// or https:// URL (SOCKS proxies are not supported)")
        }
        var rest = parts.address
        if let end = rest.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) {
            guard rest[end...] == "/" else { throw invalid("must not have a path") }
            rest = rest[..<end]
        }
        var username: String?
        var password: String?
        if let credentials = parts.credentials {
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

    /// `text` with its credentials (see `split`) replaced by `***`: for messages about a URL that may not
    /// parse. At most 200 characters.
    static func redacting(_ text: String) -> String {
        let parts = split(Substring(text))
        let scheme = parts.scheme.map { $0 + "://" } ?? ""
        return String((scheme + (parts.credentials == nil ? "" : "***@") + parts.address).prefix(200))
    }

    /// Splits a proxy URL into its scheme (before the first `://`, when that is a scheme's name), its
    /// credentials (everything after the scheme up to the LAST `@`, so a raw `/`, `?`, `#`, `@` or `:` in a
    /// password stays in the password, which no message then shows), and the rest (`host:port`, maybe with
    /// a path). RFC 3986 would end the credentials at the first `/`, `?` or `#`, but a proxy URL has no
    /// path, and a host no `@`: the last `@` is where a password like `se/cret` ends.
    private static func split(_ text: Substring) -> (scheme: Substring?, credentials: Substring?, address: Substring) {
        var rest = text
        var scheme: Substring?
        if let separator = text.range(of: "://") {
            let name = text[..<separator.lowerBound]
            if let first = name.first, first.isASCII, first.isLetter,
                name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "+-.".contains($0)) })
            {
                scheme = name
                rest = text[separator.upperBound...]
            }
        }
        guard let at = rest.lastIndex(of: "@") else { return (scheme, nil, rest) }
        return (scheme, rest[..<at], rest[rest.index(after: at)...])
    }
}
