import KakapoJSON

/// The messages and services of a descriptor set (`protoc --descriptor_set_out`), for writing Protocol
/// Buffers messages as JSON and back. (Being built: issue 33.)
public struct ProtoSchema: Sendable {}
