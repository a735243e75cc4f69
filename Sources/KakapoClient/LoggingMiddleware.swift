import Foundation
import KakapoHTTP
import Logging

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Logs every request and its result through swift-log, with credentials redacted: credential headers
/// (`Authorization`, cookies, API keys) and query parameters with secret-looking names.
public struct LoggingMiddleware: Middleware {
    public let logger: Logger
    public let level: Logger.Level

    static let secretHeaders: Set<String> = [
        "authorization", "proxy-authorization", "cookie", "set-cookie", "x-api-key", "api-key", "x-auth-token",
    ]
    static let secretParameters: Set<String> = [
        "token", "access_token", "api_key", "apikey", "key", "password", "secret", "client_secret", "signature",
    ]

    public init(logger: Logger = Logger(label: "kakapo.client"), level: Logger.Level = .info) {
        self.logger = logger
        self.level = level
    }

    public func willSend(_ request: URLRequest, endpoint: any Endpoint) {
        let headers = (request.allHTTPHeaderFields ?? [:]).sorted { $0.key < $1.key }.map { name, value in
            name + ": " + (LoggingMiddleware.secretHeaders.contains(name.lowercased()) ? "[REDACTED]" : value)
        }
        logger.log(
            level: level,
            "\(request.httpMethod ?? "GET") \(LoggingMiddleware.redacted(request.url))",
            metadata: headers.isEmpty ? nil : ["headers": .array(headers.map { .string($0) })])
    }

    public func didReceive(_ result: Result<ClientResponse, ClientError>, endpoint: any Endpoint) {
        switch result {
        case .success(let response):
            logger.log(
                level: level,
                "\(response.statusCode) \(LoggingMiddleware.redacted(response.request?.url)) (\(response.data.count) bytes)"
            )
        case .failure(let error):
            logger.log(level: level, "failed: \(error)")
        }
    }

    /// The URL with the values of secret-looking query parameters replaced.
    static func redacted(_ url: URL?) -> String {
        guard let text = url?.absoluteString else { return "-" }
        guard let mark = text.firstIndex(of: "?") else { return text }
        let query = QueryItem.parse(String(text[text.index(after: mark)...])).map { item in
            let name = item.name.removingPercentEncodingLeniently().lowercased()
            guard secretParameters.contains(name), item.value != nil else {
                return item.name + (item.value.map { "=" + $0 } ?? "")
            }
            return item.name + "=[REDACTED]"
        }
        return String(text[..<mark]) + "?" + query.joined(separator: "&")
    }
}
