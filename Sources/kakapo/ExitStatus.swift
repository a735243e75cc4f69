import ArgumentParser
import Kakapo

/// The process exit codes of design section 7, and the one table that turns an error into one of them.
enum ExitStatus {
    static let success: Int32 = 0
    /// Misses in `--strict` mode; drift (`verify`) and credentials found (`cassette lint`) too.
    static let strictMisses: Int32 = 1
    static let usage: Int32 = 2
    /// A file (cassette, routes, HAR, spec) that cannot be read, parsed or written, or a configuration that
    /// cannot be used: every error the table does not name.
    static let invalidInput: Int32 = 3
    static let portInUse: Int32 = 4
    /// `kakapo exec`: the command exited 0, but requests missed.
    static let execMisses: Int32 = 5
    /// `kakapo exec --fail-on-unused`: the command exited 0, but recordings were never used.
    static let execUnused: Int32 = 6
    /// `kakapo cassette lint`: no credentials found, but some bodies could not be inspected.
    static let notInspected: Int32 = 7

    /// The error codes that exit with something other than `invalidInput`.
    private static let table: [ErrorCode: Int32] = [.portInUse: portInUse]

    /// The exit code for `error`, by its `KakapoError` code; `invalidInput` for any other error.
    static func code(for error: any Error) -> Int32 {
        guard let error = error as? any KakapoError else { return invalidInput }
        return table[error.code] ?? invalidInput
    }

    /// Prints `error: …` on standard error (after `context`, when given) and returns the exit to throw:
    /// `throw ExitStatus.failure(error)`.
    static func failure(_ error: any Error, context: String? = nil) -> ExitCode {
        standardError("error: " + (context.map { "\($0): " } ?? "") + "\(error)")
        return ExitCode(code(for: error))
    }

    /// The exit codes, for `kakapo --help`.
    static let summary = """
        Exit codes: 0 success, 1 misses in --strict mode, 2 usage error, \
        3 unreadable or invalid cassette or configuration, 4 the port is in use; \
        kakapo exec: the command's status, else 5 a request missed, 6 a recording unused (--fail-on-unused); \
        kakapo cassette lint: 7 some bodies could not be inspected.
        """
}
