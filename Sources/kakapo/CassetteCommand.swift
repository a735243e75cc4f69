import ArgumentParser
import Foundation
import Kakapo
import KakapoGRPC
import KakapoGraphQL

/// `kakapo cassette`: check, list and clean cassette files without running a proxy.
struct CassetteCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cassette",
        abstract: "Check, list and clean cassette files.",
        subcommands: [
            Lint.self, Show.self, Redact.self, Check.self, LearnVolatile.self, ImportHAR.self, ExportHAR.self,
        ]
    )

    /// `kakapo cassette lint FILE...`
    struct Lint: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Validate cassettes and look for credentials that slipped through.",
            discussion: """
                Exit codes: 0 all clean, 1 credentials found, 3 a file is unreadable or invalid, 7 no credentials \
                found but some bodies could not be inspected (each is listed with the reason).
                """)

        @Argument(help: "The cassette files.")
        var files: [String]

        @OptionGroup var redaction: RedactionOptions

        func validate() throws {
            guard !files.isEmpty else { throw ValidationError("name at least one cassette FILE") }
        }

        /// Says so when a journal beside `file` holds recordings not in it yet (a recording or session that
        /// was killed, or one still running): the next run on the file folds them in.
        static func reportJournal(of file: String) {
            do {
                guard let journal = try CassetteSession.journal(of: file), journal.interactions + journal.unreadable > 0
                else { return }
                let count = journal.interactions
                print(
                    "\(file): \(journal.file) holds \(count) interaction\(count == 1 ? "" : "s") not in the file yet"
                        + (journal.unreadable > 0 ? " (and \(journal.unreadable) unreadable)" : "")
                        + ", left by a recording that did not end (killed, or still running): the next record, replay or session on the file folds them in"
                )
            } catch {
                standardError("\(error)")
            }
        }

        func run() throws {
            var invalid = false
            var credentials = 0
            var uninspected = 0
            let scanner = CredentialScanner(redactor: redaction.redactor)
            for file in files {
                let bytes: [UInt8]
                let cassette: Cassette
                do {
                    guard let data = FileManager.default.contents(atPath: file) else {
                        throw CassetteError(code: .unreadable, file: file, message: "cannot read the file")
                    }
                    bytes = Array(data)
                    cassette = try CassetteFile.decode(bytes, file: file)
                } catch {
                    standardError("\(error)")
                    invalid = true
                    continue
                }
                let findings = scanner.scan(cassette)
                let unread = scanner.uninspected(cassette)
                for finding in findings + unread {
                    let location =
                        JSONParser.location(of: finding.path, in: bytes).map { ":\($0.line):\($0.column)" } ?? ""
                    standardError("\(file)\(location): \(finding.message)")
                }
                credentials += findings.count
                uninspected += unread.count
                // Never "clean" about bytes that were not read.
                var summary =
                    !findings.isEmpty
                    ? "\(findings.count) credential(s) found"
                    : unread.isEmpty ? "no credentials found" : "no credentials found in what was read"
                if !unread.isEmpty {
                    summary += "; \(unread.count) bod\(unread.count == 1 ? "y" : "ies") not inspected"
                }
                print("\(file): \(cassette.interactions.count) interactions, \(summary)")
                Self.reportJournal(of: file)
            }
            if invalid { throw ExitCode(ExitStatus.invalidInput) }
            if credentials > 0 { throw ExitCode(1) }
            if uninspected > 0 { throw ExitCode(ExitStatus.notInspected) }
        }
    }

    /// `kakapo cassette show FILE`
    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List the interactions of a cassette, one per line.",
            discussion:
                "A GraphQL request shows its operation next to the URL (POST /graphql  query GetUser), a JSON-RPC request its method (POST /mcp  jsonrpc tools/call), a WebSocket upgrade its conversation (websocket: 3 from the client, 5 from the server, 2.4 s, closed 1000 by the server); --messages lists a conversation's messages under it."
        )

        @Argument(help: "The cassette file.")
        var file: String

        @Flag(
            help:
                "List the messages of each WebSocket conversation and gRPC call: direction, offset, and the start of each."
        )
        var messages = false

        @OptionGroup var grpc: GRPCOptions

        /// How a streamed answer came: ` in 5 chunks`, `, broken off` when the upstream broke it; empty for a
        /// whole answer.
        static func stream(of interaction: Interaction) -> String {
            guard let chunks = interaction.chunks else { return "" }
            let unit = chunks.count == 1 ? "chunk" : "chunks"
            return " in \(chunks.count) \(unit)" + (interaction.brokenOff ? ", broken off" : "")
                + (interaction.abandoned ? ", abandoned" : "")
        }

        /// How long ago `interaction` was recorded, as ` (3 days old)`; empty without a readable `recordedAt`.
        static func age(of interaction: Interaction, now: Int64) -> String {
            guard let recorded = ISOTime.parse(interaction.recordedAt)?.seconds else { return "" }
            let seconds = now - recorded
            func count(_ amount: Int64, _ unit: String) -> String { "\(amount) \(unit)\(amount == 1 ? "" : "s")" }
            let age: String
            switch seconds {
            case ..<0: age = "recorded later than now"
            case ..<60: age = "under a minute old"
            case ..<3_600: age = count(seconds / 60, "minute") + " old"
            case ..<172_800: age = count(seconds / 3_600, "hour") + " old"
            default: age = count(seconds / 86_400, "day") + " old"
            }
            return " (\(age))"
        }

        func run() throws {
            let schema = try grpc.schema()
            let cassette = try loadOrExit(file, schema: schema)
            let now = WallClock.seconds
            for (position, interaction) in cassette.interactions.enumerated() {
                let response = interaction.response
                let type = response.headers["Content-Type"]?.split(separator: ";").first.map(String.init) ?? "-"
                let host = interaction.request.headers["Host"] ?? "-"
                let request = interaction.request
                let operation =
                    (GraphQLRequest(request, json: { try? JSONParser.parse(request.body) })?.label
                    ?? JSONRPCMessage.label(for: request) ?? Self.grpcLabel(of: interaction)).map { "  " + $0 }
                // A conversation takes the place of the body, which an upgrade does not have.
                let content =
                    interaction.webSocket.map(Self.summary) ?? "\(response.body.count) B\(Self.stream(of: interaction))"
                print(
                    "#\(position)\t\(request.method)\t\(request.url)\(operation ?? "")\t\(response.status)\t"
                        + "\(content)\t\(type)\t\(host)\t" + interaction.recordedAt
                        + Self.age(of: interaction, now: now))
                if messages, let conversation = interaction.webSocket {
                    for line in Self.lines(of: conversation) { print("\t" + line) }
                }
                if messages { for line in Self.grpcLines(of: interaction, schema: schema) { print("\t" + line) } }
            }
        }
    }

    /// `kakapo cassette redact FILE`
    struct Redact: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Apply today's redaction rules to a cassette, in place and atomically.")

        @Argument(help: "The cassette file.")
        var file: String

        @OptionGroup var redaction: RedactionOptions

        func run() throws {
            var cassette = try loadOrExit(file)
            let summary = redact(&cassette, with: redaction.redactor)
            try saveOrExit(cassette, to: file)
            print("\(file): \(summary.map { "redacted " + $0 } ?? "nothing to redact")")
        }
    }
}

/// Applies `redactor` to every interaction; what it redacted as `Authorization ×2, token ×1`, nil for nothing.
func redact(_ cassette: inout Cassette, with redactor: Redactor) -> String? {
    var counts: [String: Int] = [:]
    for index in cassette.interactions.indices {
        let (redacted, names) = redactor.redact(cassette.interactions[index])
        cassette.interactions[index] = redacted
        for name in names { counts[name, default: 0] += 1 }
    }
    if counts.isEmpty { return nil }
    return counts.sorted { $0.key < $1.key }.map { "\($0.key) ×\($0.value)" }.joined(separator: ", ")
}

/// Saves a cassette atomically, or prints why not and exits 3.
func saveOrExit(_ cassette: Cassette, to file: String) throws {
    do {
        try CassetteFile.save(cassette, to: file)
    } catch {
        throw ExitStatus.failure(error)
    }
}

/// Loads a cassette, or prints why not and exits 3. A journal that a killed recording left beside it is
/// folded in first, and said so.
func loadOrExit(_ file: String, schema: GRPCSchema? = nil) throws -> Cassette {
    do {
        var matching = MatchOptions()
        matching.grpcSchema = schema
        if let recovery = try CassetteSession.recover(file, matching: matching) {
            standardError("kakapo: " + recovery.summary)
        }
        return try CassetteFile.load(file, schema: schema)
    } catch {
        throw ExitStatus.failure(error)
    }
}
