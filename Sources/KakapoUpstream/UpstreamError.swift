/// Why an upstream request failed. Every case answers the client with a JSON error: 504 for a timeout,
/// 502 for everything else.
public struct UpstreamError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What kind of failure this is; stable across releases.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        public let name: String
        public var description: String { name }

        public static let invalidURL = Code(name: "invalid-url")
        public static let dnsFailure = Code(name: "dns-failure")
        public static let connectionFailed = Code(name: "connection-failed")
        public static let timeout = Code(name: "timeout")
        public static let tlsFailure = Code(name: "tls-failure")
        public static let connectionLost = Code(name: "connection-lost")
        public static let responseTooLarge = Code(name: "response-too-large")
        public static let protocolError = Code(name: "protocol-error")
        public static let other = Code(name: "upstream-error")
    }

    public let code: Code
    public let message: String

    public init(code: Code, message: String) {
        self.code = code
        self.message = message
    }

    /// The status a proxy answers with: 504 Gateway Timeout or 502 Bad Gateway.
    public var status: Int { code == .timeout ? 504 : 502 }

    public var description: String { "\(code): \(message)" }
}
