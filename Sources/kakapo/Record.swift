import ArgumentParser
import Kakapo

/// `kakapo record`: forward every request to the upstream and write each exchange to the cassette.
struct Record: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Forward requests to the upstream and record every exchange into a cassette.")

    @Option(
        help:
            "The real API: http(s)://host[:port][/prefix], or h2c://... for cleartext HTTP/2 (gRPC). Not needed with --proxy (requests name their hosts)."
    )
    var upstream: String?

    @Option(help: "The cassette file to write (created if missing).")
    var cassette: String

    @Option(
        help:
            "new: replay what the cassette already has, record the rest; all: re-record everything; once: record everything if the cassette does not exist, else only replay."
    )
    var mode: RecordMode = .new

    @OptionGroup var common: CommonOptions
    @OptionGroup var upstreamOptions: UpstreamOptions

    enum RecordMode: String, ExpressibleByArgument, CaseIterable {
        case new, all, once

        var proxyMode: ProxyMode {
            switch self {
            case .new: return .new
            case .all: return .all
            case .once: return .once
            }
        }
    }

    func validate() throws {
        if upstream == nil && !common.https.proxy {
            throw ValidationError("give --upstream URL, or --proxy to record whatever hosts clients ask for")
        }
    }

    func run() async throws {
        let configuration = common.configuration(
            mode: mode.proxyMode, cassette: cassette,
            upstream: try upstreamOptions.configuration(for: upstream))
        try await ProxyRunner(
            configuration: configuration, strict: false, verbose: common.verbose, routes: common.routes,
            store: common.store, https: common.https
        ).run()
    }
}
