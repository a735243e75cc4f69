import KakapoHTTP

/// Which upstream proxy each request goes through: one for `http://` upstreams, one for `https://`
/// upstreams, and the hosts that bypass both. Kakapo decides this itself, from `--upstream-proxy` and
/// `--no-proxy` or from the environment (`fromEnvironment`), and always tells libcurl (its own reading of
/// `http_proxy` and `no_proxy` is off), so one rule applies to libcurl's transfers and to the tunnels
/// Kakapo opens itself, and the start-up log can say which (`summary`).
public struct UpstreamProxies: Sendable, Equatable {
    /// The proxy for `http://` upstreams.
    public var http: UpstreamProxy?
    /// The proxy for `https://` upstreams (libcurl tunnels through it with `CONNECT`).
    public var https: UpstreamProxy?
    /// The hosts that go direct.
    public var noProxy: NoProxyList
    /// Where `http`, `https` and `noProxy` came from (`--upstream-proxy`, `HTTPS_PROXY`), for the log.
    public var httpSource = "", httpsSource = "", noProxySource = "--no-proxy"

    /// No proxy at all.
    public static let direct = UpstreamProxies(proxy: nil, source: "")

    /// `proxy` for every upstream (nil: none), except the hosts of `noProxy`; `source` names where it came
    /// from.
    public init(proxy: UpstreamProxy?, noProxy: NoProxyList = NoProxyList(), source: String = "--upstream-proxy") {
        http = proxy
        https = proxy
        self.noProxy = noProxy
        httpSource = source
        httpsSource = source
    }

    /// The variables read, in order of preference (the lower-case spelling first, as curl does).
    static let httpNames = ["http_proxy", "HTTP_PROXY"]
    static let httpsNames = ["https_proxy", "HTTPS_PROXY"]
    static let noProxyNames = ["no_proxy", "NO_PROXY"]

    /// The proxies the environment names: `https_proxy`/`HTTPS_PROXY` for `https://` upstreams,
    /// `http_proxy`/`HTTP_PROXY` for `http://` ones, `no_proxy`/`NO_PROXY` for the hosts that bypass them
    /// (empty values count as unset). Throws `invalidURL`, naming the variable, for a value that is not a
    /// proxy URL.
    public static func fromEnvironment(_ environment: [String: String]) throws(UpstreamError) -> UpstreamProxies {
        func lookUp(_ names: [String]) -> (name: String, value: String)? {
            for name in names {
                if let value = environment[name], !value.isEmpty { return (name, value) }
            }
            return nil
        }
        func proxy(_ names: [String]) throws(UpstreamError) -> (UpstreamProxy, String)? {
            guard let (name, value) = lookUp(names) else { return nil }
            do {
                return (try UpstreamProxy(parsing: value), name)
            } catch {
                throw UpstreamError(code: error.code, message: "\(name): \(error.message)")
            }
        }
        var proxies = UpstreamProxies.direct
        if let (found, name) = try proxy(httpNames) {
            proxies.http = found
            proxies.httpSource = name
        }
        if let (found, name) = try proxy(httpsNames) {
            proxies.https = found
            proxies.httpsSource = name
        }
        if let (name, value) = lookUp(noProxyNames) {
            proxies.noProxy = try NoProxyList(parsing: value, source: name)
            proxies.noProxySource = name
        }
        return proxies
    }

    /// The names of the proxy variables set in `environment` (what `--ignore-env-proxy` ignores).
    public static func variablesSet(in environment: [String: String]) -> [String] {
        (httpNames + httpsNames + noProxyNames).filter { environment[$0].map { !$0.isEmpty } ?? false }
    }

    /// Whether no upstream goes through a proxy.
    public var isDirect: Bool { http == nil && https == nil }

    /// The proxy a request to `scheme://host` goes through; nil when it goes direct.
    public func proxy(scheme: String, host: String) -> UpstreamProxy? {
        let proxy = scheme.lowercased() == "https" ? https : http
        guard let proxy, !noProxy.bypasses(host) else { return nil }
        return proxy
    }

    /// The proxy a request to `url` (an origin or an absolute URL) goes through; nil when it goes direct.
    public func proxy(for url: String) -> UpstreamProxy? {
        guard !isDirect, let (scheme, host, _) = RequestOrigin.parts(of: url) else { return nil }
        return proxy(scheme: scheme, host: host)
    }

    /// What the start-up log says: `using the upstream proxy http://***@proxy.corp:3128 from HTTPS_PROXY
    /// for https upstreams; NO_PROXY: localhost,.corp`, one line per proxy; empty when direct.
    public var summary: [String] {
        let bypass = noProxy.isEmpty ? "" : "; \(noProxySource): \(noProxy)"
        func line(_ proxy: UpstreamProxy, _ source: String, _ which: String) -> String {
            "using the upstream proxy \(proxy) from \(source) for \(which) upstreams\(bypass)"
        }
        if let http, let https, http == https, httpSource == httpsSource {
            return [line(http, httpSource, "http and https")]
        }
        return [http.map { line($0, httpSource, "http") }, https.map { line($0, httpsSource, "https") }]
            .compactMap { $0 }
    }

    /// These rules without the proxies `isSelf(host, port)` calls Kakapo's own listening address (an
    /// environment meant for Kakapo's clients, which would send Kakapo's requests back to itself), and a
    /// warning for each one dropped.
    public func droppingSelf(_ isSelf: (String, Int) -> Bool) -> (UpstreamProxies, [String]) {
        var kept = self
        var warnings: [String] = []
        for (which, proxy, source) in [("http", http, httpSource), ("https", https, httpsSource)] {
            guard let proxy, isSelf(proxy.host, proxy.port) else { continue }
            warnings.append(
                "ignoring the upstream proxy \(proxy) from \(source) for \(which) upstreams: it is Kakapo's own address (the environment of its clients?)"
            )
            if which == "http" { kept.http = nil } else { kept.https = nil }
        }
        return (kept, warnings)
    }
}
