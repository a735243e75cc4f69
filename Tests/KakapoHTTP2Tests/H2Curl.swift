import Foundation
import KakapoTestSupport

/// curl, as users try HTTP/2 first: the body, the status and the HTTP version it used (`-w`).
/// (curl 7.88.1 fails a second request reused on an h2c connection, "Error in the HTTP2 framing layer",
/// against nginx too, so each call makes one request; H2Peer multiplexes.)
enum H2Curl {
    struct Result {
        let exitStatus: Int32
        let body: String
        let error: String
        /// The response status, 0 when none came.
        let status: Int
        /// "2", "1.1", or "0" when no response came.
        let version: String
        /// The `x-kakapo-source` header, nil when there was none.
        let source: String?
    }

    static func run(_ arguments: [String]) async throws -> Result {
        let headers = try Fixtures.temporaryDirectory() + "/headers.txt"
        let result = try await KakapoProcess.run(
            ["-sS", "--max-time", "20", "-D", headers, "-w", "\n%{http_code} %{http_version}"] + arguments,
            executable: "/usr/bin/curl")
        var lines = result.output.split(separator: "\n", omittingEmptySubsequences: false)
        let last = lines.popLast().map { $0.split(separator: " ").map(String.init) } ?? []
        let headerText = (try? String(contentsOfFile: headers, encoding: .utf8)) ?? ""
        let source = headerText.split(separator: "\r\n").last { $0.lowercased().hasPrefix("x-kakapo-source:") }
            .map { $0.split(separator: ":", maxSplits: 1)[1].trimmingCharacters(in: .whitespaces) }
        return Result(
            exitStatus: result.status, body: lines.joined(separator: "\n"), error: result.error,
            status: last.first.flatMap { Int($0) } ?? 0, version: last.count > 1 ? last[1] : "0", source: source)
    }

}
