/// One RPC method of a service in a descriptor set.
public struct ProtoMethod: Hashable, Sendable {
    /// The service's fully qualified name, without a leading dot: "demo.Greeter".
    public let service: String
    /// The method's name: "SayHello".
    public let name: String
    /// The request message's fully qualified name, without a leading dot: "demo.HelloRequest".
    public let inputType: String
    /// The response message's fully qualified name, without a leading dot.
    public let outputType: String
    /// True when the client sends a stream of messages.
    public let clientStreaming: Bool
    /// True when the server answers with a stream of messages.
    public let serverStreaming: Bool

    /// A method as the descriptor set describes it.
    public init(
        service: String, name: String, inputType: String, outputType: String, clientStreaming: Bool,
        serverStreaming: Bool
    ) {
        self.service = service
        self.name = name
        self.inputType = inputType
        self.outputType = outputType
        self.clientStreaming = clientStreaming
        self.serverStreaming = serverStreaming
    }

    /// The gRPC request path that calls this method: "/demo.Greeter/SayHello".
    public var path: String { "/\(service)/\(name)" }
}
