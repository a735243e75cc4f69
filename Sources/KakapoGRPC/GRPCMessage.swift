import KakapoHTTP
import KakapoJSON
import KakapoProtobuf

/// One gRPC message as it travels: a length-prefixed frame's flag and payload. (Being built: issue 33.)
public struct GRPCMessage: Hashable, Sendable {}
