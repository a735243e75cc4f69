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

    /// True when `name` is hop-by-hop by itself or because `Connection` lists it.
    public static func contains(_ name: String, in headers: HTTPHeaders) -> Bool {
        let lowered = name.lowercased()
        if names.contains(lowered) { return true }
        for value in headers.values(for: "Connection") {
            for token in value.split(separator: ",") where token.trimmingSpaces().lowercased() == lowered {
                return true
            }
        }
        return false
    }

    /// `headers` without any hop-by-hop field.
    public static func removing(from headers: HTTPHeaders) -> HTTPHeaders {
        var result = headers
        result.removeAll { contains($0.name, in: headers) }
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
