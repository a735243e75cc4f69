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
        if let mode { return mode }
        if common.https.proxy { return cassette == nil && common.cassetteDir == nil ? .passthrough : .new }
        return upstream == nil ? .none : .new
    }

    func validate() throws {
        // `once` is decided when the server starts (whether the cassette exists then); here it needs only
        // a cassette.
        if let problem = effectiveMode.problem(
            cassette: cassette ?? common.cassetteDir, cassetteExists: effectiveMode == .once,
            hasUpstream: upstream != nil || common.https.proxy)
        {
            throw ValidationError(problem)
        }
        if effectiveMode == .none && cassette == nil && common.routes.isEmpty && !common.https.proxy
            && common.cassetteDir == nil
        {
            throw ValidationError("give --cassette FILE, --routes FILE, --cassette-dir DIR or several")
        }
        if effectiveMode == .none && upstream != nil {
            throw ValidationError("--upstream has no effect with --mode none; leave one of them out")
        }
    }

    func run() async throws {
        let configuration = common.configuration(
            mode: effectiveMode, cassette: cassette,
            upstream: upstream != nil || common.https.proxy ? try upstreamOptions.configuration(for: upstream) : nil)
        try await ProxyRunner(
            configuration: configuration, strict: strict, verbose: common.verbose, routes: common.routes,
            store: common.store, https: common.https
        ).run()
    }
}

extension ProxyMode: ExpressibleByArgument {}
