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

    @Flag(
        help:
            "When recording ends, send each request recorded in this run to the upstream once more and mark the values that differ as volatile in the cassette (as `kakapo cassette learn-volatile` does; POST, PUT, PATCH and DELETE are not sent again). The client sends each request once."
    )
    var learnVolatile = false

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
        if learnVolatile && upstream == nil {
            throw ValidationError("--learn-volatile asks the --upstream again: give --upstream URL")
        }
    }

    func run() async throws {
        let configuration = common.configuration(
            mode: mode.proxyMode, cassette: cassette,
            upstream: try upstreamOptions.configuration(for: upstream))
        let started = UTCTimestamp.now()
        try await ProxyRunner(
            configuration: configuration, strict: false, verbose: common.verbose, routes: common.routes,
            store: common.store, https: common.https
        ).run()
        if learnVolatile, let upstream { try await learn(since: started, upstream: upstream) }
    }

    /// Learns the volatile values of the recordings made since `started` (`--learn-volatile`).
    private func learn(since started: String, upstream: String) async throws {
        let recorded = try loadOrExit(cassette)
        // Timestamps of one layout (`UTCTimestamp`) sort as text.
        let positions = recorded.interactions.indices.filter { recorded.interactions[$0].recordedAt >= started }
        guard !positions.isEmpty else { return }
        standardError("kakapo: learning volatile values: asking \(upstream) again for \(positions.count) recording(s)")
        let client = try Verify.client(for: upstream, options: upstreamOptions)
        defer { client.shutdown() }
        let learner = VolatileLearner(verifier: CassetteVerifier(redactor: common.redactor))
        _ = try await CassetteCommand.LearnVolatile.learn(
            recorded, positions: positions, file: cassette, learner: learner, client: client)
    }
}
