import ArgumentParser
import Kakapo

/// `kakapo replay`: answer from the cassette with no network at all.
struct Replay: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Answer every recorded request from the cassette, with no network.")

    @Option(help: "The cassette file to replay.")
    var cassette: String

    @Flag(help: "Exit with status 1 at shutdown if any request missed.")
    var strict = false

    @OptionGroup var common: CommonOptions

    func run() async throws {
        let configuration = common.configuration(mode: .replay, cassette: cassette, upstream: nil)
        try await ProxyRunner(
            configuration: configuration, strict: strict, verbose: common.verbose, routes: common.routes,
            store: common.store, https: common.https
        ).run()
    }
}
