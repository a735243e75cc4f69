/// Where a WebSocket upgrade request is tunnelled: the upstream's host and port, TLS or not, the target and `Host`.
public struct WebSocketDestination: Sendable, Equatable {
    /// The upstream's host name or address, as the connection dials it.
    package let host: String
    /// The upstream's TCP port.
    package let port: Int
    /// The upstream is `https://` (`wss://`).
    package let secure: Bool
    /// The request target at the upstream (its base URL's path prefix included).
    package let target: String
    /// The `Host` header the upstream gets.
    package let authority: String

    package init(host: String, port: Int, secure: Bool, target: String, authority: String) {
        self.host = host
        self.port = port
        self.secure = secure
        self.target = target
        self.authority = authority
    }

    /// The request head as the upstream gets it: `Host` replaced, `Proxy-Authorization` dropped, every
    /// other field (the upgrade's `Connection`, `Upgrade` and `Sec-WebSocket-*` among them) kept.
    package func head(method: String, version: (major: Int, minor: Int), fields: [(String, String)]) -> String {
        var text = "\(method) \(target) HTTP/\(version.major).\(version.minor)\r\nHost: \(authority)\r\n"
        for (name, value) in fields {
            if name.lowercased() == "host" || name.lowercased() == "proxy-authorization" { continue }
            text += "\(name): \(value)\r\n"
        }
        return text + "\r\n"
    }
}
