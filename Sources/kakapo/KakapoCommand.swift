import ArgumentParser
import Foundation
import Kakapo

/// `kakapo`: record an HTTP API into a cassette, replay it offline, or serve both (design section 7).
@main
struct KakapoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "kakapo",
        abstract: "A record-and-replay HTTP proxy with dynamic fallbacks.",
        discussion: ExitStatus.summary,
        version: KakapoVersion.current,
        subcommands: [
            Record.self, Replay.self, Serve.self, Exec.self, Verify.self, CassetteCommand.self, RoutesCommand.self,
            CACommand.self,
        ]
    )

    /// Parses and runs, mapping argument errors (which swift-argument-parser reports as 64) to exit code 2 and
    /// Kakapo's errors to theirs (`ExitStatus`).
    static func main() async {
        do {
            var command = try parseAsRoot()
            if var asyncCommand = command as? AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            if exitCode(for: error) == .validationFailure {
                StandardStream.write(fullMessage(for: error) + "\n", to: 2)
                Foundation.exit(ExitStatus.usage)
            }
            if error is any KakapoError { exit(withError: ExitStatus.failure(error)) }
            exit(withError: error)
        }
    }
}
