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

    @Option(help: "The real API: http(s)://host[:port][/prefix].")
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
        if effectiveMode.usesUpstream && effectiveMode != .once && upstream == nil && !common.https.proxy {
            throw ValidationError("--mode \(effectiveMode.rawValue) needs --upstream URL")
        }
        if effectiveMode != .passthrough && effectiveMode != .none && cassette == nil && common.cassetteDir == nil {
            // new, all and once write the cassette.
            throw ValidationError("--cassette FILE is required to record (--mode \(effectiveMode.rawValue))")
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
