import KakapoJSON

/// The messages and services of a descriptor set (`protoc --descriptor_set_out`), for writing Protocol
/// Buffers messages as JSON and back.
public struct ProtoSchema: Sendable {
    /// A FileDescriptorSet's bytes (protoc --descriptor_set_out, with or without --include_imports).
    public init(descriptorSet bytes: [UInt8]) throws(ProtoError) {
        throw ProtoError("descriptor sets are not read yet")
    }

    /// Reads the file; errors name it.
    public init(contentsOfFile path: String) throws(ProtoError) {
        throw ProtoError("\(path): descriptor sets are not read yet")
    }

    /// The method a gRPC request path names ("/demo.Greeter/SayHello"), or nil.
    public func method(path: String) -> ProtoMethod? { nil }

    /// A message's bytes as proto3 JSON (canonical JSON mapping: lowerCamelCase json_name keys, int64 as
    /// strings, bytes base64, enums by name, fields at their default value left out).
    public func json(from message: [UInt8], type: String) throws(ProtoError) -> JSONValue {
        throw ProtoError("\(type): messages are not read yet")
    }

    /// JSON (as above; also accepts the original field names, numbers for enums, numbers for int64) to bytes,
    /// fields written in field-number order.
    public func message(from json: JSONValue, type: String) throws(ProtoError) -> [UInt8] {
        throw ProtoError("\(type): messages are not written yet")
    }
}
