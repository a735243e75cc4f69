import ArgumentParser
import Foundation
import Kakapo

extension CassetteCommand {
    /// `kakapo cassette import-har IN.har OUT.json`
    struct ImportHAR: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "import-har",
            abstract:
                "Turn a HAR file (browser devtools, Charles, Proxyman, Polly.js) into a cassette, redacting credentials.",
            discussion:
                "Exit codes: 0 written, 3 the HAR file is unreadable or invalid (the message names the entry and field)."
        )

        @Argument(help: "The HAR file to read.")
        var input: String

        @Argument(help: "The cassette to write (replaced atomically if it exists).")
        var output: String

        @OptionGroup var redaction: RedactionOptions

        func run() throws {
            guard let data = FileManager.default.contents(atPath: input) else {
                throw ExitStatus.failure(
                    HARError(file: input, path: [], message: "cannot read the file", code: .unreadable))
            }
            var cassette: Cassette
            let changes: HARImportReport
            do {
                (cassette, changes) = try HARImport.read(Array(data), file: input)
            } catch {
                throw ExitStatus.failure(error)
            }
            let summary = redact(&cassette, with: redaction.redactor)
            try saveOrExit(cassette, to: output)
            print(
                "\(output): \(cassette.interactions.count) interaction\(cassette.interactions.count == 1 ? "" : "s") from \(input)"
                    + (summary.map { "; redacted " + $0 } ?? ""))
            // What was changed so that every client can read the replayed answers, a line per kind.
            for line in changes.lines { print("  " + line) }
        }
    }

    /// `kakapo cassette export-har IN.json OUT.har`
    struct ExportHAR: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "export-har",
            abstract: "Write a cassette as a HAR 1.2 file that devtools and HAR viewers open.")

        @Argument(help: "The cassette to read.")
        var input: String

        @Argument(help: "The HAR file to write.")
        var output: String

        @Option(help: "The scheme of the URLs in the HAR file (cassettes keep the host, not the scheme).")
        var scheme: String = "http"

        func validate() throws {
            guard scheme == "http" || scheme == "https" else {
                throw ValidationError("--scheme must be http or https, not \"\(scheme)\"")
            }
        }

        func run() throws {
            let cassette = try loadOrExit(input)
            do {
                try CassetteFile.write(HARExport.bytes(cassette, scheme: scheme, title: input), to: output)
            } catch {
                throw ExitStatus.failure(error)
            }
            print(
                "\(output): \(cassette.interactions.count) entr\(cassette.interactions.count == 1 ? "y" : "ies") from \(input)"
            )
        }
    }
}
