/// Where a WebSocket upgrade request goes: WebSockets are tunnelled to the upstream, not recorded.
struct WebSocketDestination: Sendable, Equatable {
    let host: String
    let port: Int
    /// The upstream is `https://` (`wss://`).
    let secure: Bool
    /// The request target at the upstream (its base URL's path prefix included).
    let target: String
    /// The `Host` header the upstream gets.
    let authority: String

    /// The request head as the upstream gets it: `Host` replaced, `Proxy-Authorization` dropped, every
    /// other field (the upgrade's `Connection`, `Upgrade` and `Sec-WebSocket-*` among them) kept.
    func head(method: String, version: (major: Int, minor: Int), fields: [(String, String)]) -> String {
        var text = "\(method) \(target) HTTP/\(version.major).\(version.minor)\r\nHost: \(authority)\r\n"
        for (name, value) in fields {
            if name.lowercased() == "host" || name.lowercased() == "proxy-authorization" { continue }
            text += "\(name): \(value)\r\n"
        }
        return text + "\r\n"
    }
}
