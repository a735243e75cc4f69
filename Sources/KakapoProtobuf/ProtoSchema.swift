import Foundation
import KakapoJSON

/// The messages and services of a descriptor set (`protoc --descriptor_set_out`), for writing Protocol
/// Buffers messages as JSON and back. The well-known types (Timestamp, Duration, the wrappers, Empty,
/// Struct, Value, ListValue, Any, FieldMask) are known without their files.
///
/// `json(from:type:)` drops unknown fields (JSON has no place for them) and writes proto3 JSON, so it
/// is lossless only for messages written canonically: check `message(from: json) == bytes` before
/// relying on JSON to reproduce a message's exact bytes.
public struct ProtoSchema: Sendable {
    /// The largest descriptor set file read (a real one is kilobytes; `--include_imports` of a large API
    /// a few megabytes).
    public static let maximumFileSize = 64 << 20

    let registry: ProtoRegistry

    /// A FileDescriptorSet's bytes (protoc --descriptor_set_out, with or without --include_imports).
    public init(descriptorSet bytes: [UInt8]) throws(ProtoError) {
        registry = try ProtoDescriptorSetReader.read(bytes)
    }

    /// Reads the file; errors name it.
    public init(contentsOfFile path: String) throws(ProtoError) {
        let data: Data
        do {
            let attributes = try FileManager.default.attributesOfItem(atPath: path)
            if let size = attributes[.size] as? NSNumber, size.int64Value > Int64(Self.maximumFileSize) {
                throw ProtoError("\(path): \(size) bytes, larger than a descriptor set can be (64 MiB)")
            }
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch let error as ProtoError {
            throw error
        } catch {
            throw ProtoError("\(path): cannot read the descriptor set (\(error.localizedDescription))")
        }
        do {
            registry = try ProtoDescriptorSetReader.read(Array(data))
        } catch {
            throw ProtoError("\(path): \(error.message)")
        }
    }

    /// Every method of every service, ordered by path.
    public var methods: [ProtoMethod] {
        registry.methods.values.sorted { $0.path < $1.path }
    }

    /// The method a gRPC request path names ("/demo.Greeter/SayHello"), or nil.
    public func method(path: String) -> ProtoMethod? { registry.methods[path] }

    /// True when the schema has a message type of this fully qualified name (with or without a leading dot).
    public func hasMessageType(_ name: String) -> Bool {
        registry.messages[name.hasPrefix(".") ? String(name.dropFirst()) : name] != nil
    }

    /// A message's bytes as proto3 JSON (canonical JSON mapping: lowerCamelCase json_name keys, int64 as
    /// strings, bytes base64, enums by name, fields at their default value left out).
    public func json(from message: [UInt8], type: String) throws(ProtoError) -> JSONValue {
        let decoder = ProtoMessageDecoder(registry: registry, bytes: message)
        return try decoder.message(0..<message.count, type: type, depth: 0)
    }

    /// The message as JSON (as `json(from:type:)`), only when that JSON writes back to exactly these bytes,
    /// so a recording can keep the JSON in place of the bytes. Messages that would not survive the trip
    /// (unknown fields, fields out of field-number order, defaults written out, a varint longer than it
    /// needs) are an error that says so; keep their bytes instead.
    public func reversibleJSON(from message: [UInt8], type: String) throws(ProtoError) -> JSONValue {
        let json = try json(from: message, type: type)
        let again = try self.message(from: json, type: type)
        guard again == message else {
            let index =
                zip(again, message).enumerated().first { $0.element.0 != $0.element.1 }?.offset
                ?? min(again.count, message.count)
            throw ProtoError(
                "\(type): its JSON would write different bytes from byte \(index) on (unknown fields, fields out of "
                    + "order or written at their default value)")
        }
        return json
    }

    /// JSON (as above; also accepts the original field names, numbers for enums, numbers for int64) to bytes,
    /// fields written in field-number order.
    public func message(from json: JSONValue, type: String) throws(ProtoError) -> [UInt8] {
        let encoder = ProtoMessageEncoder(registry: registry)
        return try encoder.message(json, type: type, pointer: JSONPointer(components: []), depth: 0)
    }
}
