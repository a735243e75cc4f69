import ArgumentParser
import Kakapo

/// `kakapo serve`: the general form, any mode, with or without an upstream.
struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Serve a cassette in any mode, optionally in front of an upstream.")

    @Option(
        help:
            "The cassette file (optional in passthrough mode, with --routes in mode none, and with --cassette-dir: requests that name no session then miss)."
    )
    var cassette: String?

    @Option(help: "The real API: http(s)://host[:port][/prefix], or h2c://... for cleartext HTTP/2 (gRPC).")
    var upstream: String?

    @Option(
        help:
            "none: replay only; new: replay hits, record misses; all: re-record; once: replay if the cassette exists, else record everything; passthrough: forward only. Default: new with --upstream, none without."
    )
    var mode: ProxyMode?

    @Flag(help: "Exit with status 1 at shutdown if any request missed.")
    var strict = false

    @OptionGroup var common: CommonOptions
    @OptionGroup var upstreamOptions: UpstreamOptions

    var effectiveMode: ProxyMode {
        mode ?? Self.defaultMode(cassette: cassette, upstream: upstream, common: common)
    }

    func validate() throws {
        try Self.check(effectiveMode, cassette: cassette, upstream: upstream, common: common)
    }

    func run() async throws {
        let configuration = common.configuration(
            mode: effectiveMode, cassette: cassette,
            upstream: try Self.upstreamConfiguration(upstream, options: upstreamOptions, common: common))
        try await ProxyRunner(
            configuration: configuration, strict: strict, verbose: common.verbose, routes: common.routes,
            store: common.store, https: common.https
        ).run()
    }

    /// The mode when `--mode` is not given: new with an upstream (or a cassette behind the forward proxy),
    /// passthrough for a forward proxy with no cassette, none otherwise. `kakapo exec` shares it.
    static func defaultMode(cassette: String?, upstream: String?, common: CommonOptions) -> ProxyMode {
        if common.https.proxy { return cassette == nil && common.cassetteDir == nil ? .passthrough : .new }
        return upstream == nil ? .replay : .new
    }

    /// Whether `mode` can run with what the options give it (a usage error saying why, if not).
    static func check(_ mode: ProxyMode, cassette: String?, upstream: String?, common: CommonOptions) throws {
        // `once` is decided when the server starts (whether the cassette exists then); here it needs only
        // a cassette.
        if let problem = mode.problem(
            cassette: cassette ?? common.cassetteDir, cassetteExists: mode == .once,
            hasUpstream: upstream != nil || common.https.proxy)
        {
            throw ValidationError(problem)
        }
        if mode == .replay && cassette == nil && common.routes.isEmpty && !common.https.proxy
            && common.cassetteDir == nil
        {
            throw ValidationError("give --cassette FILE, --routes FILE, --cassette-dir DIR or several")
        }
        // With --cassette-dir, sessions may record through the upstream while the server's own mode does not.
        if mode == .replay && upstream != nil && common.cassetteDir == nil {
            throw ValidationError(
                "--upstream has no effect with --mode none (without --cassette-dir, whose sessions may record); leave one of them out"
            )
        }
    }

    /// The upstream of `--upstream` or of the forward proxy (whose requests name their hosts); nil for
    /// neither.
    static func upstreamConfiguration(_ upstream: String?, options: UpstreamOptions, common: CommonOptions) throws
        -> UpstreamConfiguration?
    {
        upstream != nil || common.https.proxy ? try options.configuration(for: upstream) : nil
    }
}

extension ProxyMode: ExpressibleByArgument {}
