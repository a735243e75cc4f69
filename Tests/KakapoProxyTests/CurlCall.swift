import KakapoTestSupport

/// The curl binary run as a user runs it, its answer taken apart: status, header names lowercased to
/// their values, body.
enum CurlCall {
    /// `curl --silent --show-error --max-time 10` with `arguments`, which should hold `--include` or
    /// `--head` so the head is there to read.
    static func run(_ arguments: [String]) async throws -> (status: Int, headers: [String: String], body: String) {
        let result = try await KakapoProcess.run(
            ["--silent", "--show-error", "--max-time", "10"] + arguments, executable: "/usr/bin/curl")
        let parts = result.output.components(separatedBy: "\r\n\r\n")
        let lines = (parts.first ?? "").components(separatedBy: "\r\n")
        let status = lines.first.flatMap { Int($0.split(separator: " ").dropFirst().first ?? "") } ?? 0
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(
                in: .whitespaces)
        }
        return (status, headers, parts.dropFirst().joined(separator: "\r\n\r\n"))
    }
}
