import KakapoHTTP

/// A response together with the layer that produced it.
public struct ProxyAnswer: Sendable {
    public var response: HTTPResponse
    public var source: ResponseSource
    /// The response already prepared for the wire (recorded answers), if any.
    var prepared: PreparedResponse?

    public init(response: HTTPResponse, source: ResponseSource) {
        self.response = response
        self.source = source
    }

    init(response: HTTPResponse, source: ResponseSource, prepared: PreparedResponse?) {
        self.response = response
        self.source = source
        self.prepared = prepared
    }
}
