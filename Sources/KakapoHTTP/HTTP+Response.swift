extension HTTP {
    /// A complete HTTP response: status, ordered headers, body bytes, and the trailer fields that followed
    /// the body (gRPC's `grpc-status`; empty for most answers).
    public struct Response: Hashable, Sendable {
        public var status: Int
        public var headers: HTTP.Headers
        public var body: [UInt8]
        /// Fields sent after the body (HTTP/2 trailers, or a chunked HTTP/1.1 body's); empty when none came.
        public var trailers: HTTP.Headers
        /// The HTTP version the upstream answered in (`"1.1"`, `"2"`), when it is known: a recorded answer
        /// notes it; Kakapo's own answers leave it nil.
        public var version: String?

        public init(
            status: Int, headers: HTTP.Headers = HTTP.Headers(), body: [UInt8] = [],
            trailers: HTTP.Headers = HTTP.Headers(), version: String? = nil
        ) {
            self.status = status
            self.headers = headers
            self.body = body
            self.trailers = trailers
            self.version = version
        }

        /// A response whose body is UTF-8 text with the given content type.
        public init(status: Int, contentType: String, text: String) {
            self.init(status: status, headers: ["Content-Type": contentType], body: Array(text.utf8))
        }
    }
}

/// Headers that describe one connection rather than the message (RFC 9110, section 7.6.1).
/// A proxy never forwards them.
public enum HopByHopHeaders {
    public static let names: Set<String> = [
        "connection", "keep-alive", "proxy-connection", "transfer-encoding", "te", "trailer", "upgrade",
    ]

    /// The fixed names, in lower case, for comparing without allocating.
    private static let fixed = Array(names)

    /// Whether `name` is one of the fixed hop-by-hop names, in any case (compared in place: a name of
    /// another length costs one length check per fixed name).
    static func isFixed(_ name: String) -> Bool { fixed.contains { name.caseInsensitiveEquals($0) } }

    /// `headers` without any hop-by-hop field: the fixed ones and those `Connection` lists.
    public static func removing(from headers: HTTP.Headers) -> HTTP.Headers {
        // Most messages have none: checking names in place costs no allocation.
        guard headers.contains(where: { isFixed($0.name) }) else { return headers }
        // `Connection: keep-alive` (the usual value) names nothing more to drop.
        var listed: [String] = []
        for value in headers.values(for: "Connection") {
            for token in value.split(separator: ",") {
                let name = token.trimmingSpaces()
                if !name.isEmpty && !isFixed(name) { listed.append(name) }
            }
        }
        var result = headers
        result.removeAll { field in
            isFixed(field.name) || listed.contains { field.name.caseInsensitiveEquals($0) }
        }
        return result
    }

    /// A request's `headers` as they go on to the upstream: `removing(from:)`, but a `TE` that lists
    /// `trailers` goes on as exactly `trailers` (its name as it came). That is the one TE value HTTP/2 allows,
    /// and gRPC servers refuse a call without it; other TE values name codings of this hop only.
    public static func removing(fromRequest headers: HTTP.Headers) -> HTTP.Headers {
        var result = removing(from: headers)
        guard result.count != headers.count else { return result }
        let te = headers.first { field in
            field.name.caseInsensitiveEquals("te")
                && field.value.split(separator: ",").contains { token in
                    // `trailers` takes no parameters; a `;q=` after it is tolerated all the same.
                    let name = token.split(separator: ";", maxSplits: 1).first ?? ""
                    return name.trimmingSpaces().caseInsensitiveEquals("trailers")
                }
        }
        if let te { result.add(name: te.name, value: "trailers") }
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
