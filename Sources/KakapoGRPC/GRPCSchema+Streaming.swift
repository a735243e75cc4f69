extension GRPCSchema {
    /// Whether each side of the call to `path` (`/demo.Greeter/Chat`) streams, as the descriptor set declares
    /// the method (`stream` before its input or output type); nil when the set has no such method.
    public func streaming(path: String) -> (client: Bool, server: Bool)? {
        guard let method = proto.method(path: Self.methodPath(path)) else { return nil }
        return (method.clientStreaming, method.serverStreaming)
    }
}
