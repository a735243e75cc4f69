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
    }

    /// The upstream configuration for `--upstream url`; nil URL (a forward proxy without one) gives a
    /// client that only forwards requests naming their host.
    func configuration(for url: String?) throws -> UpstreamConfiguration {
        if let url, UpstreamURL(url) == nil {
            throw ValidationError("--upstream must be an http:// or https:// URL with a host, not \"\(url)\"")
        }
        var configuration = UpstreamConfiguration(
            baseURL: url ?? "", connectTimeout: connectTimeout, timeout: timeout, insecure: insecure,
            maximumConcurrentRequests: upstreamConcurrency)
        configuration.additionalCAFile = upstreamCA
        return configuration
    }
}
