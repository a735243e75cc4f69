import KakapoHTTP

/// The upstream's answer to a WebSocket upgrade, read from the raw bytes a recorder sees (`101 Switching
/// Protocols`, or a refusal such as `403`): its status, its headers in wire order, and what they negotiated.
package struct WebSocketRecordingHead: Equatable, Sendable {
    /// The status code (`101`, or the refusal's).
    package var status: Int
    /// The header fields in wire order, repeated names kept.
    package var headers: HTTP.Headers

    /// The most a head may take; a longer one is not read (and the conversation not recorded).
    package static let maximumBytes = 64 * 1024

    /// What reading the bytes so far gave.
    package enum Parse: Equatable {
        /// No blank line yet.
        case incomplete
        /// The head, and where the bytes after it start.
        case head(WebSocketRecordingHead, bodyStart: Int)
        /// Not an HTTP/1.x response head.
        case malformed
    }

    /// Reads the head at the start of `bytes` (a status line, header lines, a blank line). `searchingFrom`
    /// skips what an earlier call already searched (its byte count less 3), so a head that arrives a byte
    /// at a time costs its length, not its length squared.
    package static func parse(_ bytes: [UInt8], searchingFrom start: Int = 0) -> Parse {
        guard let end = blankLine(in: bytes, from: max(0, start)) else { return .incomplete }
        let text = String(decoding: bytes[0..<end], as: UTF8.self)
        var lines = text.split(separator: "\r\n", omittingEmptySubsequences: false)[...]
        guard let statusLine = lines.popFirst() else { return .malformed }
        let parts = statusLine.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/1."), parts[1].count == 3,
            let status = Int(parts[1]), (100...599).contains(status)
        else { return .malformed }
        var headers = HTTP.Headers()
        for line in lines where !line.isEmpty {
            guard let colon = line.firstIndex(of: ":") else { return .malformed }
            let name = line[..<colon].trimmingSpaces()
            guard !name.isEmpty else { return .malformed }
            headers.add(name: name, value: line[line.index(after: colon)...].trimmingSpaces())
        }
        return .head(WebSocketRecordingHead(status: status, headers: headers), bodyStart: end + 4)
    }

    /// Where `\r\n\r\n` starts in `bytes`, nil when it is not there.
    private static func blankLine(in bytes: [UInt8], from start: Int) -> Int? {
        guard bytes.count >= 4, start <= bytes.count - 4 else { return nil }
        for index in start...(bytes.count - 4)
        where bytes[index] == 13 && bytes[index + 1] == 10 && bytes[index + 2] == 13 && bytes[index + 3] == 10 {
            return index
        }
        return nil
    }

    /// The subprotocol the upstream chose; nil for none.
    package var subprotocol: String? {
        guard let value = headers["Sec-WebSocket-Protocol"]?.trimmingSpaces(), !value.isEmpty else { return nil }
        return value
    }

    /// permessage-deflate as the upstream accepted it (RFC 7692 7.1): nil when it was not negotiated;
    /// otherwise whether each side resets its compressor after every message (`*_no_context_takeover`).
    package var deflate: (serverResets: Bool, clientResets: Bool)? {
        for value in headers.values(for: "Sec-WebSocket-Extensions") {
            for offer in value.split(separator: ",") {
                let parameters = offer.split(separator: ";").map { $0.trimmingSpaces().lowercased() }
                guard parameters.first == "permessage-deflate" else { continue }
                let names = parameters.dropFirst().map { $0.split(separator: "=").first.map(String.init) ?? "" }
                return (names.contains("server_no_context_takeover"), names.contains("client_no_context_takeover"))
            }
        }
        return nil
    }

    /// The body length a refusal announced (`Content-Length`, one plain number); nil without one, with
    /// several that disagree, or with `Transfer-Encoding`.
    package var contentLength: Int? {
        guard headers["Transfer-Encoding"] == nil else { return nil }
        let values = Set(headers.values(for: "Content-Length").map { $0.trimmingSpaces() })
        guard values.count == 1, let value = values.first, !value.isEmpty, value.count <= 18,
            value.allSatisfy(\.isASCII), value.allSatisfy(\.isNumber)
        else { return nil }
        return Int(value)
    }
}
