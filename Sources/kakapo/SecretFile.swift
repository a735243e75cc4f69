import ArgumentParser
import Foundation

/// Secrets read from a file rather than argv, where other users see them in `ps` (`--admin-token-file`,
/// `--proxy-auth-file`).
enum SecretFile {
    /// The first line of the file at `path`, trimmed, read from at most its first 4 KiB (a secret is short;
    /// a device or a huge file must not hang start-up); empty for an empty file.
    static func firstLine(of path: String, flag: String) throws -> String {
        let cannotRead = ValidationError("\(flag): cannot read \(path)")
        guard let handle = FileHandle(forReadingAtPath: path) else { throw cannotRead }
        defer { try? handle.close() }
        let data: Data
        do {
            data = try handle.read(upToCount: 4096) ?? Data()
        } catch {
            throw cannotRead
        }
        let line = String(decoding: data, as: UTF8.self).split(
            separator: "\n", maxSplits: 1, omittingEmptySubsequences: false
        ).first.map(String.init)
        return line?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
    }

    /// A secret given on the command line (`flag`, shown by `ps`), as the first line of a file (`fileFlag`)
    /// or, when neither is given and `readsEnvironment`, in the environment variable `variable`; with the
    /// name of where it came from, for messages. Nil when none is set; both flags at once is an error.
    static func secret(
        _ value: String?, flag: String, file: String?, fileFlag: String, variable: String,
        environment: [String: String], readsEnvironment: Bool = true
    ) throws -> (text: String, source: String)? {
        switch (value, file) {
        case (_?, _?):
            throw ValidationError("\(flag) and \(fileFlag) cannot be given together; choose one")
        case (let value?, nil):
            return (value, flag)
        case (nil, let file?):
            return (try firstLine(of: file, flag: fileFlag), fileFlag)
        case (nil, nil):
            guard readsEnvironment, let value = environment[variable], !value.isEmpty else { return nil }
            return (value, variable)
        }
    }
}
