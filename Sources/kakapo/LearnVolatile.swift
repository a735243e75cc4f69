import ArgumentParser
import Foundation
import Kakapo

extension CassetteCommand {
    /// `kakapo cassette learn-volatile FILE --against URL`
    struct LearnVolatile: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "learn-volatile",
            abstract:
                "Mark the values of a cassette's recordings that change from call to call, by asking the live API again.",
            discussion: """
                Sends each recorded request to the live API once more and marks, in each interaction's "volatile", \
                the response headers and JSON pointers whose values differ from the recording, and the request's \
                query parameters and body values of a volatile shape (UUIDs, times of sending, long random nonces). \
                Matching ignores the request's; verify does not count the response's. The file is rewritten \
                atomically; markings already there are kept. Exit codes: 0 done, 1 a request failed, 3 unreadable \
                cassette.
                """)

        @Argument(help: "The cassette file.")
        var file: String

        @Option(help: "The live API: http(s)://host[:port][/prefix].")
        var against: String

        @Flag(help: "Also send POST, PUT, PATCH and DELETE requests again (they may change things on the API).")
        var includeUnsafe = false

        @Option(
            name: .customLong("header"),
            help: "A header added to every request, such as 'Authorization: Bearer TOKEN' (repeatable).")
        var headers: [String] = []

        @OptionGroup var upstreamOptions: UpstreamOptions
        @OptionGroup var redaction: RedactionOptions

        func validate() throws { try Verify.validateHeaders(headers) }

        func run() async throws {
            let cassette = try loadOrExit(file)
            let client = try Verify.client(for: against, options: upstreamOptions)
            defer { client.shutdown() }
            let learner = VolatileLearner(
                verifier: CassetteVerifier(
                    includeUnsafe: includeUnsafe, extraHeaders: Verify.headers(headers), redactor: redaction.redactor))
            let failed = try await Self.learn(cassette, positions: nil, file: file, learner: learner, client: client)
            if failed { throw ExitCode(1) }
        }

        /// Learns the volatile places of `positions` (all when nil) of `cassette`, saves it to `file` when
        /// anything was learned, and prints one line per recording; true when a request failed.
        static func learn(
            _ cassette: Cassette, positions: [Int]?, file: String, learner: VolatileLearner, client: UpstreamClient
        ) async throws -> Bool {
            let (learned, findings) = await learner.learn(cassette, positions: positions, through: client)
            for finding in findings { print(finding.text) }
            if learned != cassette {
                try saveOrExit(learned, to: file)
                let count = findings.filter { !$0.learned.isEmpty }.count
                standardError(
                    "kakapo: marked volatile values in \(count) interaction\(count == 1 ? "" : "s") of \(file)")
            }
            return findings.contains { $0.note?.hasPrefix("failed") == true }
        }
    }
}
