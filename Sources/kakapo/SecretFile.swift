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
}
