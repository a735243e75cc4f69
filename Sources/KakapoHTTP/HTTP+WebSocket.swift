extension HTTP.Request {
    /// Whether this request asks to become a WebSocket (`Connection: Upgrade` among its tokens and
    /// `Upgrade: websocket`, any case), RFC 6455 4.1.
    public var isWebSocketUpgrade: Bool {
        headers.values(for: "Connection").contains { value in
            value.split(separator: ",").contains { String($0).trimmingSpaces().lowercased() == "upgrade" }
        } && headers.values(for: "Upgrade").contains { $0.trimmingSpaces().lowercased() == "websocket" }
    }

    /// The subprotocols the client offers (`Sec-WebSocket-Protocol`, every field, comma-separated), in order.
    public var offeredWebSocketSubprotocols: [String] {
        headers.values(for: "Sec-WebSocket-Protocol").flatMap { value in
            value.split(separator: ",").map { String($0).trimmingSpaces() }.filter { !$0.isEmpty }
        }
    }
}
