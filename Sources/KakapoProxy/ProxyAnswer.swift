import KakapoHTTP

/// A response together with the layer that produced it.
public struct ProxyAnswer: Sendable {
    public var response: HTTPResponse
    public var source: ResponseSource

    public init(response: HTTPResponse, source: ResponseSource) {
        self.response = response
        self.source = source
    }
}
