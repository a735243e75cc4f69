import ArgumentParser
import Foundation
import Kakapo

/// `kakapo routes`: work with routes files without serving.
struct RoutesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "routes",
        abstract: "Check routes files.",
        subcommands: [Lint.self]
    )

    /// `kakapo routes lint FILE...`
    struct Lint: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Validate routes files without serving them.",
            discussion: """
                Every error of a file is listed as FILE:LINE:COLUMN: KEY.PATH: message (the first \(Lint.limit) \
                per file, then how many more). Exit codes: 0 every file is valid, 3 a file is unreadable or invalid.
                """)

        /// How many errors of one file are listed.
        static let limit = 100

        @Argument(help: "The routes files (JSON, or YAML for .yaml/.yml).")
        var files: [String]

        func validate() throws {
            guard !files.isEmpty else { throw ValidationError("name at least one routes FILE") }
        }

        func run() throws {
            var invalid = false
            for file in files {
                let (definition, errors) = RoutesFile.check(file)
                guard errors.isEmpty else {
                    for error in errors.prefix(Lint.limit) { standardError("\(error)") }
                    if errors.count > Lint.limit {
                        standardError("\(file): and \(errors.count - Lint.limit) more errors")
                    }
                    let count = errors.count
                    standardError("\(file): \(count) error\(count == 1 ? "" : "s")")
                    invalid = true
                    continue
                }
                let routes = definition.routes.count
                let resources = definition.resources.count
                print(
                    "\(file): \(routes) route\(routes == 1 ? "" : "s"), \(resources) resource\(resources == 1 ? "" : "s")"
                )
            }
            if invalid { throw ExitCode(ExitStatus.invalidInput) }
        }
    }
}
