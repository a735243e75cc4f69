import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Something every request of a client passes through, in the order the client lists them:
/// `prepare` may change the request, `willSend` sees it leave, `didReceive` sees the result arrive (a
/// cancelled request arrives as `ClientError.underlying(CancellationError(), nil)`), and `process` may
/// change the result. Each has a default that does nothing.
public protocol Middleware: Sendable {
    func prepare(_ request: URLRequest, endpoint: any Endpoint) -> URLRequest
    func willSend(_ request: URLRequest, endpoint: any Endpoint)
    func didReceive(_ result: Result<ClientResponse, ClientError>, endpoint: any Endpoint)
    func process(_ result: Result<ClientResponse, ClientError>, endpoint: any Endpoint) -> Result<
        ClientResponse, ClientError
    >
}

extension Middleware {
    public func prepare(_ request: URLRequest, endpoint: any Endpoint) -> URLRequest { request }
    public func willSend(_ request: URLRequest, endpoint: any Endpoint) {}
    public func didReceive(_ result: Result<ClientResponse, ClientError>, endpoint: any Endpoint) {}
    public func process(_ result: Result<ClientResponse, ClientError>, endpoint: any Endpoint) -> Result<
        ClientResponse, ClientError
    > { result }
}
