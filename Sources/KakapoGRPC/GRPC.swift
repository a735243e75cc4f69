import KakapoHTTP

/// gRPC over HTTP/2 as Kakapo records and replays it: which requests are gRPC calls, the length-prefixed
/// framing of their bodies, and the fields a status travels in (the gRPC spec's PROTOCOL-HTTP2.md).
public enum GRPC {
    /// Whether `contentType` names a gRPC call: `application/grpc` or `application/grpc+FORMAT` (`+proto`,
    /// `+json`), parameters aside. gRPC-Web (`application/grpc-web…`) carries its trailers in the body and
    /// is passed through as an ordinary answer.
    public static func isGRPC(contentType: String?) -> Bool {
        guard let contentType else { return false }
        let type = contentType.split(separator: ";", maxSplits: 1).first.map(String.init) ?? ""
        let lowered = type.trimmingSpacesAndTabs().lowercased()
        return lowered == "application/grpc" || lowered.hasPrefix("application/grpc+")
    }

    /// Whether `request` is a gRPC call (by its `content-type`).
    public static func isGRPC(_ request: HTTP.Request) -> Bool { isGRPC(contentType: request.headers["Content-Type"]) }

    /// The trailer fields that carry a call's outcome.
    public static let statusField = "grpc-status"
    /// The percent-encoded text that explains a status.
    public static let messageField = "grpc-message"
    /// The fields of a Trailers-Only answer that stay headers: the rest of its one HEADERS frame (status,
    /// message, custom trailing metadata) is its trailers.
    static let headFields: Set<String> = [
        "content-type", "content-length", "date", "server", "grpc-encoding", "grpc-accept-encoding",
    ]

    /// Splits a gRPC body into its messages. A frame cut short, or one announcing more bytes than follow (up
    /// to the 4 GiB a length can say), is an error naming the message and its byte; nothing here traps.
    public static func messages(in body: [UInt8]) throws(GRPCFramingError) -> [GRPCMessage] {
        var messages: [GRPCMessage] = []
        var index = 0
        while index < body.count {
            let remaining = body.count - index
            guard remaining >= 5 else {
                throw GRPCFramingError(
                    "message \(messages.count + 1) (at byte \(index)) is cut short: its 5-byte prefix has \(remaining)")
            }
            let flag = body[index]
            guard flag <= 1 else {
                throw GRPCFramingError(
                    "message \(messages.count + 1) (at byte \(index)) has compressed flag \(flag); only 0 and 1 exist")
            }
            let length = Self.length(body, at: index + 1)
            guard length <= remaining - 5 else {
                throw GRPCFramingError(
                    "message \(messages.count + 1) (at byte \(index)) announces \(length) bytes; \(remaining - 5) follow"
                )
            }
            messages.append(GRPCMessage(compressed: flag == 1, bytes: Array(body[(index + 5)..<(index + 5 + length)])))
            index += 5 + length
        }
        return messages
    }

    /// Takes the complete frames off the front of `pending` (each whole, prefix included), leaving a partial
    /// one there: how a streamed answer is cut into one recorded chunk per message. A frame whose prefix is
    /// invalid (flag above 1) ends the cutting: what remains stays in `pending`, recorded as it came.
    public static func takeFrames(from pending: inout [UInt8]) -> [[UInt8]] {
        var frames: [[UInt8]] = []
        var start = 0
        while pending.count - start >= 5, pending[start] <= 1 {
            let length = Self.length(pending, at: start + 1)
            guard length <= pending.count - start - 5 else { break }
            frames.append(Array(pending[start..<(start + 5 + length)]))
            start += 5 + length
        }
        if start > 0 { pending.removeFirst(start) }
        return frames
    }

    /// The big-endian 32-bit length at `index` (four bytes there are the caller's to check).
    private static func length(_ bytes: [UInt8], at index: Int) -> Int {
        Int(bytes[index]) << 24 | Int(bytes[index + 1]) << 16 | Int(bytes[index + 2]) << 8 | Int(bytes[index + 3])
    }

    /// The most bytes of text a `grpc-message` Kakapo writes carries, before encoding: clients and proxies
    /// limit header sizes (8 KiB is common), and a percent-encoded byte can take three.
    public static let largestMessageBytes = 2048

    /// `text` as a `grpc-message` value: UTF-8, with every byte outside printable ASCII (0x20-0x7E) and `%`
    /// itself percent-encoded (upper-case hex), cut to its first `limit` bytes (never inside a character).
    public static func percentEncoded(_ text: String, limit: Int = largestMessageBytes) -> String {
        var bytes = Array(text.utf8)
        if bytes.count > max(limit, 0) {
            var end = max(limit, 0)
            // Back to the start of a character: continuation bytes are 10xxxxxx.
            while end > 0, bytes[end] & 0xC0 == 0x80 { end -= 1 }
            bytes.removeSubrange(end...)
        }
        let hex = Array("0123456789ABCDEF".utf8)
        var encoded: [UInt8] = []
        encoded.reserveCapacity(bytes.count)
        for byte in bytes {
            if byte >= 0x20 && byte <= 0x7E && byte != UInt8(ascii: "%") {
                encoded.append(byte)
            } else {
                encoded += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]]
            }
        }
        return String(decoding: encoded, as: UTF8.self)
    }

    /// A `grpc-message` value decoded: `%XX` sequences to bytes, read as UTF-8 (invalid sequences replaced);
    /// malformed escapes are kept as they are, as the spec asks of receivers.
    public static func percentDecoded(_ value: String) -> String {
        value.removingPercentEncodingLeniently(plusAsSpace: false)
    }

    /// An answer Kakapo gives a gRPC call itself: HTTP 200, `content-type: application/grpc`, no messages,
    /// and `status` with `message` (percent-encoded, bounded) in the trailers, so a gRPC client reports the
    /// status and its text rather than a protocol error.
    public static func errorResponse(status: GRPCStatus, message: String) -> HTTP.Response {
        var trailers = HTTP.Headers()
        trailers.add(name: statusField, value: String(status.code))
        if !message.isEmpty { trailers.add(name: messageField, value: percentEncoded(message)) }
        return HTTP.Response(status: 200, headers: ["content-type": "application/grpc"], trailers: trailers)
    }

    /// The status a gRPC answer ended with: from its trailers, or from its headers when it came as one
    /// HEADERS frame (Trailers-Only); nil when neither holds a valid `grpc-status`.
    public static func status(of response: HTTP.Response) -> GRPCStatus? {
        (response.trailers[statusField] ?? response.headers[statusField]).flatMap(GRPCStatus.init(field:))
    }

    /// The status text of a gRPC answer, decoded (trailers first, then headers); nil when there is none.
    public static func statusMessage(of response: HTTP.Response) -> String? {
        (response.trailers[messageField] ?? response.headers[messageField]).map(percentDecoded)
    }

    /// `response` as a recording keeps it: a Trailers-Only answer (one HEADERS frame holding `grpc-status`, as
    /// a server fails a call before any message) has its trailers (status, message, custom trailing metadata:
    /// all but `content-type` and the like) moved after the body, the form every gRPC client reads.
    public static func movingOutcomeToTrailers(_ response: HTTP.Response) -> HTTP.Response {
        guard response.trailers[statusField] == nil, response.headers[statusField] != nil else { return response }
        var moved = response
        for field in response.headers where !headFields.contains(field.name.lowercased()) {
            moved.trailers.add(name: field.name, value: field.value)
        }
        moved.headers.removeAll { !headFields.contains($0.name.lowercased()) }
        return moved
    }
}

extension String {
    fileprivate func trimmingSpacesAndTabs() -> Substring {
        let isBlank: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = firstIndex(where: { !isBlank($0) }), let last = lastIndex(where: { !isBlank($0) }) else {
            return ""
        }
        return self[first...last]
    }
}
