import ArgumentParser
import Foundation
import Kakapo

/// `kakapo verify`: are the recordings still what the live API answers?
struct Verify: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Send every recorded request to the live API and say, per recording, whether what changed matters.",
        discussion: """
            Each recording is same (nothing changed but values marked volatile, or known to change on every call \
            such as Date), benign (volatile-looking values not yet marked, other values of the same type, added \
            members or headers, another header order) or changed (another status or media type, a member removed, \
            a type changed, a new enum value, a non-JSON body that differs); the differences of changed ones are \
            listed under them. Exit codes: 0 nothing changed, 1 a recording changed (or a request failed), 2 usage \
            error, 3 unreadable cassette.
            """)

    @Option(help: "The cassette to check.")
    var cassette: String

    @Option(help: "The live API: http(s)://host[:port][/prefix], or h2c://... for cleartext HTTP/2 (gRPC).")
    var upstream: String

    @Option(
        name: .customLong("ignore-json"),
        help: "A JSON pointer (such as /meta/generatedAt) left out of body comparison, with all under it (repeatable).")
    var ignoreJSON: [String] = []

    @Flag(help: "Also send POST, PUT, PATCH and DELETE requests (they may change things on the API).")
    var includeUnsafe = false

    @Option(help: "text for people, json for machines.")
    var format: OutputFormat = .text

    @Flag(
        help:
            "Re-record the changed recordings (atomically, keeping their volatile markings; the others stay byte for byte)."
    )
    var update = false

    @Flag(
        help:
            "With --update, also replace a 2xx recording with a live 401 or 403 (by default kept: the credential given is more likely wrong than the recording)."
    )
    var acceptAuthFailures = false

    @Option(
        name: .customLong("header"),
        help:
            "A header added to every request, such as 'Authorization: Bearer TOKEN' (recordings hold none) (repeatable)."
    )
    var headers: [String] = []

    @OptionGroup var upstreamOptions: UpstreamOptions
    @OptionGroup var redaction: RedactionOptions

    enum OutputFormat: String, ExpressibleByArgument, CaseIterable {
        case text, json
    }

    func validate() throws {
        try validatePointers(ignoreJSON, flag: "--ignore-json")
        try Self.validateHeaders(headers)
    }

    func run() async throws {
        var recorded = try loadOrExit(cassette)
        let client = try Self.client(for: upstream, options: upstreamOptions)
        defer { client.shutdown() }
        let verifier = CassetteVerifier(
            comparison: ResponseComparison(ignoredPointers: ignoreJSON.compactMap(JSONPointer.init)),
            includeUnsafe: includeUnsafe, extraHeaders: Self.headers(headers), redactor: redaction.redactor)
        let (findings, live) = await verifier.verify(recorded, through: client)
        let count = { (outcome: Drift.Outcome) in findings.filter { $0.outcome == outcome }.count }
        let totals =
            "\(count(.same)) same, \(count(.benign)) benign, \(count(.changed)) changed, \(count(.skipped)) skipped, \(count(.failed)) failed"
        switch format {
        case .text:
            for finding in findings { print(finding.text) }
            print(totals)
        case .json:
            let document: JSONValue = [
                "cassette": .string(cassette), "upstream": .string(upstream),
                "interactions": .array(findings.map(\.json)),
                "same": .number(JSONNumber(count(.same))), "benign": .number(JSONNumber(count(.benign))),
                "changed": .number(JSONNumber(count(.changed))),
                "skipped": .number(JSONNumber(count(.skipped))), "failed": .number(JSONNumber(count(.failed))),
            ]
            print(String(decoding: JSONWriter(layout: .readable).write(document), as: UTF8.self))
        }
        if update && !live.isEmpty {
            let redactor = redaction.redactor
            var replaced = 0
            for (position, (response, milliseconds)) in live.sorted(by: { $0.key < $1.key }) {
                let old = recorded.interactions[position]
                if !acceptAuthFailures, (200..<300).contains(old.response.status),
                    response.status == 401 || response.status == 403
                {
                    standardError(
                        "kakapo: kept #\(position) \(old.request.method.rawValue) \(old.request.target): the live API answered \(response.status) (a missing or expired credential?); --accept-auth-failures re-records it"
                    )
                    continue
                }
                var fresh = Interaction(
                    request: old.request, response: response, recordedAt: UTCTimestamp.now(),
                    durationMilliseconds: milliseconds)
                fresh.volatile = old.volatile
                recorded.interactions[position] = redactor.redact(fresh).interaction
                replaced += 1
            }
            if replaced > 0 {
                try saveOrExit(recorded, to: cassette)
                standardError("kakapo: re-recorded \(replaced) interaction\(replaced == 1 ? "" : "s") in \(cassette)")
            }
        }
        if count(.changed) > 0 || count(.failed) > 0 { throw ExitCode(1) }
    }

    /// A client for the live API at `upstream` (proxies from the environment reported on standard error).
    static func client(for upstream: String, options: UpstreamOptions) throws -> UpstreamClient {
        let configuration = try options.configuration(for: upstream)
        if let proxies = configuration.proxies {
            for line in UpstreamOptions.proxyReport(proxies, environment: ProcessInfo.processInfo.environment) {
                standardError("kakapo: \(line)")
            }
        }
        do {
            return try UpstreamClient(configuration: configuration)
        } catch {
            throw ExitStatus.failure(error)
        }
    }

    /// `--header 'Name: value'` flags as headers.
    static func headers(_ flags: [String]) -> HTTP.Headers {
        var extra = HTTP.Headers()
        for header in flags {
            let parts = header.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
            extra.add(name: parts[0].trimmingSpaces(), value: parts.count > 1 ? parts[1].trimmingSpaces() : "")
        }
        return extra
    }

    /// Refuses a `--header` flag without a colon.
    static func validateHeaders(_ flags: [String]) throws {
        for header in flags {
            let name = header.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
            guard name.count == 2, !name[0].trimmingSpaces().isEmpty else {
                throw ValidationError("--header takes 'Name: value', not \"\(header)\"")
            }
        }
    }
}
