import ArgumentParser
import Foundation
import Kakapo
import KakapoHTTP2
import KakapoTLS

/// Options for HTTPS: the forward-proxy mode with its CA, and a TLS listener for the reverse-proxy mode.
struct ForwardProxyOptions: ParsableArguments {
    @Flag(
        help:
            "Work as a forward proxy: clients set HTTP_PROXY/HTTPS_PROXY to Kakapo, each request names its host, and CONNECT tunnels to intercepted hosts are decrypted with certificates from Kakapo's CA."
    )
    var proxy = false

    @Option(
        name: .customLong("intercept"),
        help: ArgumentHelp(
            "With --proxy, decrypt only this host's tunnels (repeatable; *.example.com for its subdomains); others pass through blind. Default: every host.",
            valueName: "host"))
    var intercept: [String] = []

    @Option(
        help: ArgumentHelp(
            "With --proxy, require these credentials (Proxy-Authorization: Basic) on proxy requests and CONNECTs; the password at least 8 characters. Other users can see it in `ps`: prefer --proxy-auth-file or the KAKAPO_PROXY_AUTH environment variable.",
            valueName: "user:password"))
    var proxyAuth: String?

    @Option(
        help: ArgumentHelp(
            "Read the proxy credentials (see --proxy-auth) from the first line of this file, trimmed.",
            valueName: "file"))
    var proxyAuthFile: String?

    @Option(
        help: ArgumentHelp(
            "The folder of Kakapo's CA, created on first use (default ~/.kakapo/ca).", valueName: "dir"))
    var caDir: String?

    @Flag(help: "Answer TLS on the listening port with a certificate from Kakapo's CA for localhost and 127.0.0.1.")
    var tls = false

    @Option(
        help: ArgumentHelp("Answer TLS on the listening port with this certificate chain (PEM).", valueName: "file"))
    var tlsCert: String?

    @Option(help: ArgumentHelp("The private key (PEM) of --tls-cert.", valueName: "file"))
    var tlsKey: String?

    @Flag(
        name: .customLong("no-http2"),
        help:
            "Speak HTTP/1.1 only: no HTTP/2 with prior knowledge (h2c) on the listening port, and no h2 offered by ALPN on --tls or in --proxy tunnels."
    )
    var noHTTP2 = false

    func validate() throws {
        if !intercept.isEmpty && !proxy {
            throw ValidationError("--intercept only applies to the forward proxy: add --proxy")
        }
        _ = try proxyCredentials()
        for host in intercept where host.isEmpty || host.contains("/") || host.contains(":") || host.contains(" ") {
            throw ValidationError(
                "--intercept takes a host name such as api.example.com or *.example.com, not \"\(host)\"")
        }
        if (tlsCert == nil) != (tlsKey == nil) {
            throw ValidationError("--tls-cert and --tls-key go together: give both")
        }
        if tls && tlsCert != nil {
            throw ValidationError("--tls makes a certificate from Kakapo's CA; leave it out when giving --tls-cert")
        }
        for (flag, path) in [("--tls-cert", tlsCert), ("--tls-key", tlsKey)] {
            if let path, !FileManager.default.isReadableFile(atPath: path) {
                throw ValidationError("\(flag): cannot read \(path)")
            }
        }
    }

    /// Whether the listening port answers TLS.
    var listensWithTLS: Bool { tls || tlsCert != nil }

    /// HTTP/2 for the server, unless `--no-http2` (or this build has none).
    var http2: HTTP2Server? { noHTTP2 || !HTTP2Server.isAvailable ? nil : HTTP2Server() }

    /// What ALPN offers on the TLS listener and in decrypted tunnels.
    var applicationProtocols: [String] { http2 == nil ? ["http/1.1"] : ["h2", "http/1.1"] }

    /// The CA of `--ca-dir` (or the default folder), created when missing.
    func authority() throws(TLSSetupError) -> CertificateAuthority {
        try CertificateAuthority.loadOrCreate(directory: caDir ?? CertificateAuthority.defaultDirectory)
    }

    /// Sets the forward-proxy part of `configuration` and the listener and interception parts of `server`,
    /// and returns the CA they use. The CA is made or read once, and only when one of them needs it.
    @discardableResult
    func apply(to configuration: inout ProxyConfiguration, server: inout ServerTLS) throws(TLSSetupError)
        -> CertificateAuthority?
    {
        let authority = proxy || tls ? try self.authority() : nil
        if proxy, let authority {
            configuration.forwardProxy = ForwardProxyConfiguration(
                intercept: intercept, credentials: resolvedProxyCredentials)
            server.interception = InterceptionCertificates(
                authority: authority, applicationProtocols: applicationProtocols)
        }
        if let tlsCert, let tlsKey {
            server.listener = try ListenerCertificate(
                certificatePath: tlsCert, keyPath: tlsKey, applicationProtocols: applicationProtocols)
        } else if tls, let authority {
            server.listener = try ListenerCertificate(authority: authority, applicationProtocols: applicationProtocols)
        }
        return authority
    }
}

extension ForwardProxyOptions {
    /// The credentials of `--proxy-auth`, `--proxy-auth-file` (its first line, trimmed) or, when neither is
    /// given, the `KAKAPO_PROXY_AUTH` environment variable (read only with `--proxy`: it concerns the
    /// forward proxy alone); nil when none is set. Messages name the source, never the password.
    func proxyCredentials(environment: [String: String] = ProcessInfo.processInfo.environment) throws
        -> ProxyCredentials?
    {
        guard
            let (text, source) = try SecretFile.secret(
                proxyAuth, flag: "--proxy-auth", file: proxyAuthFile, fileFlag: "--proxy-auth-file",
                variable: "KAKAPO_PROXY_AUTH", environment: environment, readsEnvironment: proxy)
        else { return nil }
        guard proxy else { throw ValidationError("\(source) only applies to the forward proxy: add --proxy") }
        do {
            return try ProxyCredentials(text)
        } catch {
            throw ValidationError("\(source) \(error.message)")
        }
    }

    /// The credentials `validate()` accepted. Should the file become unreadable in between, the proxy stays
    /// locked behind random credentials rather than open.
    fileprivate var resolvedProxyCredentials: ProxyCredentials? {
        do {
            return try proxyCredentials()
        } catch {
            return try? ProxyCredentials("kakapo:" + UUID().uuidString)
        }
    }
}
