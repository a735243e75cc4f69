import Foundation

/// A WebSocket client over a raw connection, for checking what Kakapo tunnels: the handshake and one
/// text message.
public enum WebSocketConversation {
    /// The RFC 6455 example key and the accept value a real server derives from it.
    public static let key = "dGhlIHNhbXBsZSBub25jZQ=="
    public static let accept = "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="

    /// A client's text frame: FIN, opcode 1, masked as clients must.
    public static func maskedTextFrame(_ text: String) -> [UInt8] {
        let payload = Array(text.utf8)
        let mask: [UInt8] = [0x37, 0xFA, 0x21, 0x3D]
        return [0x81, 0x80 | UInt8(payload.count)] + mask
            + payload.enumerated().map { $0.element ^ mask[$0.offset % 4] }
    }

    /// Opens a WebSocket to `port`, sends one message and returns the handshake answer and the reply text.
    public static func converse(port: Int, message: String) async -> (head: String, reply: String) {
        await withCheckedContinuation { continuation in
            Thread {
                guard let connection = try? RawConnection(port: port, timeout: 5) else {
                    continuation.resume(returning: ("", ""))
                    return
                }
                connection.send(
                    "GET /chat HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                        + "Sec-WebSocket-Key: \(key)\r\nSec-WebSocket-Version: 13\r\n\r\n")
                let (head, _) = connection.receiveHead()
                guard head.hasPrefix("HTTP/1.1 101") else {
                    continuation.resume(returning: (head, ""))
                    return
                }
                connection.send(bytes: maskedTextFrame(message))
                let (reply, _) = connection.receive { $0.contains(message) }
                continuation.resume(returning: (head, reply))
            }.start()
        }
    }
}
