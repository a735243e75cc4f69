import Foundation

/// Reports requests starting and ending (for a spinner or a count of requests in flight).
public struct NetworkActivityMiddleware: Middleware {
    public enum Change: Sendable, Equatable {
        case began
        case ended
    }

    public let onChange: @Sendable (Change, any Endpoint) -> Void

    public init(onChange: @escaping @Sendable (Change, any Endpoint) -> Void) { self.onChange = onChange }

    public func willSend(_ request: URLRequest, endpoint: any Endpoint) { onChange(.began, endpoint) }

    public func didReceive(_ result: Result<ClientResponse, ClientError>, endpoint: any Endpoint) {
        onChange(.ended, endpoint)
    }
}

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif
