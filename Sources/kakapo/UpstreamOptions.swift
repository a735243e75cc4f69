import ArgumentParser
import Foundation
import Kakapo

/// Options of the commands that talk to an upstream.
struct UpstreamOptions: ParsableArguments {
    @Option(help: "Seconds allowed to connect to the upstream.")
    var connectTimeout: Double = 10

    @Option(help: "Seconds allowed for a whole upstream exchange.")
    var timeout: Double = 60

    @Flag(help: "Do not verify the upstream's TLS certificate.")
    var insecure = false

    @Option(
        help:
            "How many connections to the upstream may carry requests at once (more wait their turn; a transfer whose client does not read or send does not count, up to four times this many)."
    )
    var upstreamConcurrency: Int = 32

    @Option(
        help: ArgumentHelp(
            "A PEM file of CA certificates to trust for upstream TLS besides the system's (private APIs, test servers).",
            valueName: "file"))
    var upstreamCA: String?

    @Option(
        help: ArgumentHelp(
            "Reach upstreams through this HTTP proxy: http(s)://[user:password@]host:port (the credentials are never logged or recorded, but other users can see them in `ps`: prefer HTTPS_PROXY / HTTP_PROXY in the environment for a proxy that wants them). Default: HTTPS_PROXY / HTTP_PROXY from the environment.",
            valueName: "url"))
    var upstreamProxy: String?

    @Option(
        help: ArgumentHelp(
            "Hosts that bypass the upstream proxy, comma-separated: names (with their subdomains), .example.com, IP addresses, CIDR ranges (10.0.0.0/8, fd00::/8), * for all. Default: NO_PROXY from the environment.",
            valueName: "list"))
    var noProxy: String?

    @Flag(help: "Ignore HTTPS_PROXY, HTTP_PROXY and NO_PROXY in the environment: reach upstreams directly.")
    var ignoreEnvProxy = false

    @Flag(
        help:
            "Send the client's Host header to --upstream unchanged instead of the upstream's host: for requests signed over Host (AWS SigV4, presigned S3 URLs, Google Cloud Storage) by a client that signs for Kakapo's address."
    )
    var preserveHost = false

    /// The longest `--connect-timeout`: an hour, in seconds.
    static let largestConnectTimeout = 3_600.0

    func validate() throws {
        if let upstreamCA, !FileManager.default.isReadableFile(atPath: upstreamCA) {
            throw ValidationError("--upstream-ca: cannot read \(upstreamCA)")
        }
        try checkSeconds(connectTimeout, flag: "--connect-timeout", upTo: UpstreamOptions.largestConnectTimeout)
        try checkSeconds(timeout, flag: "--timeout", upTo: CommonOptions.largestTimeout)
        guard (1...1024).contains(upstreamConcurrency) else {
            throw ValidationError("--upstream-concurrency must be from 1 to 1024, not \(upstreamConcurrency)")
        }
        if ignoreEnvProxy && upstreamProxy != nil {
            throw ValidationError("--upstream-proxy already overrides the environment: leave out --ignore-env-proxy")
        }
        do {
            _ = try proxies(environment: [:])
        } catch {
            throw ValidationError(error.message)
        }
    }

    /// The upstream proxies: `--upstream-proxy` (with `--no-proxy`) when given; else, unless
    /// `--ignore-env-proxy`, those `environment` names (`--no-proxy` replacing its `NO_PROXY`).
    func proxies(environment: [String: String]) throws(UpstreamError) -> UpstreamProxies {
        let bypass = try noProxy.map { list throws(UpstreamError) in try NoProxyList(parsing: list) }
        if let upstreamProxy {
            let proxy = try UpstreamProxy(parsing: upstreamProxy)
            return UpstreamProxies(proxy: proxy, noProxy: bypass ?? NoProxyList())
        }
        if ignoreEnvProxy { return .direct }
        var proxies = try UpstreamProxies.fromEnvironment(environment)
        if let bypass {
            proxies.noProxy = bypass
            proxies.noProxySource = "--no-proxy"
        }
        return proxies
    }

    /// What the start-up log says about upstream proxies: the proxy of each scheme and where it came from,
    /// or which variables of the environment are not used.
    static func proxyReport(_ proxies: UpstreamProxies, environment: [String: String]) -> [String] {
        let set = UpstreamProxies.variablesSet(in: environment)
        let fromFlag = proxies.http != nil && proxies.httpSource == "--upstream-proxy"
        var lines = proxies.summary
        if proxies.isDirect && !set.isEmpty {
            lines.append(
                "not using \(set.joined(separator: ", ")) from the environment: upstreams are reached directly")
        } else if fromFlag && !set.isEmpty {
            lines.append("--upstream-proxy overrides \(set.joined(separator: ", ")) from the environment")
        }
        return lines
    }

    /// The upstream configuration for `--upstream url`; nil URL (a forward proxy without one) gives a
    /// client that only forwards requests naming their host.
    func configuration(for url: String?) throws -> UpstreamConfiguration {
        if let url, UpstreamURL(url) == nil {
            throw ValidationError(
                "--upstream must be an http://, https:// or h2c:// (cleartext HTTP/2) URL with a host, not \"\(url)\"")
        }
        var configuration = UpstreamConfiguration(
            baseURL: url ?? "", connectTimeout: connectTimeout, timeout: timeout, insecure: insecure,
            maximumConcurrentRequests: upstreamConcurrency)
        configuration.additionalCAFile = upstreamCA
        configuration.preservesHost = preserveHost
        do {
            configuration.proxies = try proxies(environment: ProcessInfo.processInfo.environment)
        } catch {
            throw ValidationError(error.message)
        }
        return configuration
    }
}
