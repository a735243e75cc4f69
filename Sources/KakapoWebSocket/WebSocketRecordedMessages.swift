import KakapoHTTP

/// The messages of a conversation being recorded, kept compactly: every payload in one byte array and a
/// small fixed-size entry per message (where it ends, its offset, who sent it, whether it is text), so a
/// long conversation costs its bytes plus about 24 bytes a message until it becomes `WebSocketMessage`s
/// once, at the end.
package struct WebSocketRecordedMessages {
    private struct Entry {
        var end: Int
        var offsetMilliseconds: Double
        var fromServer: Bool
        var isText: Bool
    }

    private var bytes: [UInt8] = []
    private var entries: [Entry] = []

    /// No messages yet.
    package init() {}

    /// The payload bytes kept so far.
    package var byteCount: Int { bytes.count }
    /// How many messages are kept so far.
    package var count: Int { entries.count }

    /// Keeps one whole message (the caller has checked it against the conversation's budget).
    package mutating func append(
        from sender: WebSocketMessage.Sender, isText: Bool, offsetMilliseconds: Double, payload: [UInt8]
    ) {
        bytes.append(contentsOf: payload)
        entries.append(
            Entry(
                end: bytes.count, offsetMilliseconds: offsetMilliseconds, fromServer: sender == .server,
                isText: isText))
    }

    /// How many messages each side sent.
    package var counts: (client: Int, server: Int) {
        let server = entries.count { $0.fromServer }
        return (entries.count - server, server)
    }

    /// The messages in the order they were sent; a text message that is not valid UTF-8 becomes binary
    /// (so the cassette keeps it as base64, byte for byte).
    package func messages() -> [WebSocketMessage] {
        var start = 0
        return entries.map { entry in
            let slice = bytes[start..<entry.end]
            start = entry.end
            let payload: WebSocketMessage.Payload
            if entry.isText, let text = String(validating: slice, as: UTF8.self) {
                payload = .text(text)
            } else {
                payload = .binary(Array(slice))
            }
            return WebSocketMessage(
                from: entry.fromServer ? .server : .client, offsetMilliseconds: entry.offsetMilliseconds,
                payload: payload)
        }
    }
}
