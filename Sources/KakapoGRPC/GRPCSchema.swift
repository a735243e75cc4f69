import Foundation
import KakapoJSON
import KakapoProtobuf

/// The descriptor set given with `--proto-descriptor`, as recording, replay and matching use it: a call's
/// messages as JSON by the types its method path names. Equal when read from the same bytes, so the match
/// options that carry it stay comparable.
public struct GRPCSchema: Hashable, Sendable {
    /// Which messages of a call: the client's (the method's input type) or the server's (its output type).
    public enum Side: Sendable {
        case request
        case response
    }

    /// The services and messages read from the file.
    public let proto: ProtoSchema
    /// Where it was read from, for messages.
    public let file: String
    /// What the file held: two schemas are equal when they were read from the same bytes.
    private let bytes: [UInt8]

    /// The largest descriptor set read: protoc's for a large API is a few hundred KiB.
    public static let largestFileBytes = 64 << 20

    /// Reads the descriptor set at `path` (`protoc --descriptor_set_out`); errors name the file.
    public init(contentsOfFile path: String) throws(ProtoError) {
        let attributes = try? FileManager.default.attributesOfItem(atPath: path)
        guard let attributes else { throw ProtoError("\(path): no such file") }
        if let size = attributes[.size] as? Int, size > Self.largestFileBytes {
            throw ProtoError("\(path): \(size) bytes is larger than a descriptor set may be (64 MiB)")
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ProtoError("\(path): cannot read the file")
        }
        try self.init(descriptorSet: Array(data), file: path)
    }

    /// The descriptor set in `bytes`; `file` names it in messages.
    public init(descriptorSet bytes: [UInt8], file: String) throws(ProtoError) {
        do {
            self.proto = try ProtoSchema(descriptorSet: bytes)
        } catch {
            throw ProtoError(error.message.hasPrefix(file) ? error.message : "\(file): \(error.message)")
        }
        self.file = file
        self.bytes = bytes
    }

    public static func == (lhs: GRPCSchema, rhs: GRPCSchema) -> Bool { lhs.bytes == rhs.bytes }

    public func hash(into hasher: inout Hasher) {
        // The size and the ends are enough to tell descriptor sets apart; equality compares them whole.
        hasher.combine(bytes.count)
        for byte in bytes.prefix(32) { hasher.combine(byte) }
        for byte in bytes.suffix(32) { hasher.combine(byte) }
    }

    /// The message type of `side` of the call to `path` (`/demo.Greeter/SayHello`); nil when the set has no
    /// such method.
    public func messageType(path: String, side: Side) -> String? {
        guard let method = proto.method(path: Self.methodPath(path)) else { return nil }
        return side == .request ? method.inputType : method.outputType
    }

    /// The message as JSON when the call's type is known and it converts both ways to the same bytes (so
    /// writing it as JSON loses nothing); nil otherwise (compressed, unknown fields, another encoding).
    public func exactJSON(of message: GRPCMessage, path: String, side: Side) -> JSONValue? {
        guard !message.compressed, let type = messageType(path: path, side: side),
            let json = try? proto.json(from: message.bytes, type: type),
            let again = try? proto.message(from: json, type: type), again == message.bytes
        else { return nil }
        return json
    }

    /// The message as JSON for matching: nil when it is compressed, the type is unknown or it does not decode.
    public func json(of message: GRPCMessage, path: String, side: Side) -> JSONValue? {
        guard !message.compressed, let type = messageType(path: path, side: side) else { return nil }
        return try? proto.json(from: message.bytes, type: type)
    }

    /// A message's bytes from its JSON, by the type of `side` of the call to `path`.
    public func message(from json: JSONValue, path: String, side: Side) throws(ProtoError) -> [UInt8] {
        guard let type = messageType(path: path, side: side) else {
            throw ProtoError("\(file) has no method \(Self.methodPath(path))")
        }
        return try proto.message(from: json, type: type)
    }

    /// The `/package.Service/Method` a request path ends with: its last two segments, without a query (an
    /// upstream's base path may come before them).
    static func methodPath(_ path: String) -> String {
        let withoutQuery = path.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        let segments = withoutQuery.split(separator: "/")
        return "/" + segments.suffix(2).joined(separator: "/")
    }
}
