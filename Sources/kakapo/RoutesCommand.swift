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
            discussion: "Exit codes: 0 every file is valid, 3 a file is unreadable or invalid.")

        @Argument(help: "The routes files (JSON, or YAML for .yaml/.yml).")
        var files: [String]

        func validate() throws {
            guard !files.isEmpty else { throw ValidationError("name at least one routes FILE") }
        }

        func run() throws {
            var invalid = false
            for file in files {
                do {
                    let definition = try RoutesFile.load(file)
                    let routes = definition.routes.count
                    let resources = definition.resources.count
                    print(
                        "\(file): \(routes) route\(routes == 1 ? "" : "s"), \(resources) resource\(resources == 1 ? "" : "s")"
                    )
                } catch {
                    standardError("\(error)")
                    invalid = true
                }
            }
            if invalid { throw ExitCode(ExitStatus.invalidInput) }
        }
    }
}
