import KakapoHTTP

/// Why an upstream request failed. Every case answers the client with a JSON error: 504 for a timeout,
/// 503 when Kakapo is out of descriptors, 502 for everything else.
public struct UpstreamError: KakapoError, Hashable, Sendable {
    /// The kinds of upstream failure, below; the names are stable across releases.
    public typealias Code = ErrorCode

    public let code: Code
    public let message: String

    public init(code: Code, message: String) {
        self.code = code
        self.message = message
    }

    /// The status a proxy answers with: 504 Gateway Timeout, 503 Service Unavailable when Kakapo itself
    /// is out of descriptors, or 502 Bad Gateway.
    public var status: Int {
        switch code {
        case .timeout: return 504
        case .outOfDescriptors: return 503
        default: return 502
        }
    }

    public var description: String { "\(code): \(message)" }
}

extension ErrorCode {
    /// The upstream URL cannot be used.
    public static let invalidURL = ErrorCode(name: "invalid-url")
    /// The upstream's host name did not resolve.
    public static let dnsFailure = ErrorCode(name: "dns-failure")
    /// The upstream refused the connection or could not be reached.
    public static let connectionFailed = ErrorCode(name: "connection-failed")
    /// The upstream did not answer in time.
    public static let timeout = ErrorCode(name: "timeout")
    /// The TLS handshake with the upstream failed.
    public static let tlsFailure = ErrorCode(name: "tls-failure")
    /// The upstream closed the connection before the answer ended.
    public static let connectionLost = ErrorCode(name: "connection-lost")
    /// The upstream's answer is larger than allowed.
    public static let responseTooLarge = ErrorCode(name: "response-too-large")
    /// The upstream answered something that is not HTTP.
    public static let protocolError = ErrorCode(name: "protocol-error")
    /// The upstream proxy refused to forward (407 Proxy Authentication Required, 403, a refused `CONNECT`).
    public static let upstreamProxyRefused = ErrorCode(name: "upstream-proxy-refused")
    /// The upstream proxy cannot be reached (connection refused, unknown name, failed TLS to it).
    public static let upstreamProxyUnreachable = ErrorCode(name: "upstream-proxy-unreachable")
    /// Kakapo could not open a connection to the upstream: it is out of file descriptors (EMFILE, ENFILE).
    public static let outOfDescriptors = ErrorCode(name: "out-of-descriptors")
    /// An upstream failure of no other kind (the client is shut down, libcurl could not start a transfer).
    public static let other = ErrorCode(name: "upstream-error")
}
