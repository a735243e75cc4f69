/// A complete HTTP response: status, ordered headers and body bytes.
public struct HTTPResponse: Hashable, Sendable {
    public var status: Int
    public var headers: HTTPHeaders
    public var body: [UInt8]

    public init(status: Int, headers: HTTPHeaders = HTTPHeaders(), body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A response whose body is UTF-8 text with the given content type.
    public init(status: Int, contentType: String, text: String) {
        self.init(status: status, headers: ["Content-Type": contentType], body: Array(text.utf8))
    }
}

/// Headers that describe one connection rather than the message (RFC 9110, section 7.6.1).
/// A proxy never forwards them.
public enum HopByHopHeaders {
    public static let names: Set<String> = [
        "connection", "keep-alive", "proxy-connection", "transfer-encoding", "te", "trailer", "upgrade",
    ]

    /// `headers` without any hop-by-hop field: the fixed ones and those `Connection` lists.
    public static func removing(from headers: HTTPHeaders) -> HTTPHeaders {
        // Most messages have none: checking names in place costs no allocation.
        if !headers.contains(where: { field in names.contains { field.name.caseInsensitiveEquals($0) } }) {
            return headers
        }
        let listed = Set(
            headers.values(for: "Connection").flatMap { $0.split(separator: ",") }.map {
                $0.trimmingSpaces().lowercased()
            })
        var result = headers
        result.removeAll { field in
            let lowered = field.name.lowercased()
            return names.contains(lowered) || listed.contains(lowered)
        }
        return result
    }
}

extension StringProtocol {
    /// The string without leading and trailing spaces and tabs.
    public func trimmingSpaces() -> String {
        var start = startIndex
        var end = endIndex
        while start < end, self[start] == " " || self[start] == "\t" { start = index(after: start) }
        while end > start, self[index(before: end)] == " " || self[index(before: end)] == "\t" {
            end = index(before: end)
        }
        return String(self[start..<end])
    }
}
