/// Every message type, enum type and method of a schema, by fully qualified name (no leading dot) and,
/// for methods, by gRPC path.
struct ProtoRegistry: Sendable {
    var messages: [String: ProtoMessageType] = [:]
    var enums: [String: ProtoEnumType] = [:]
    var methods: [String: ProtoMethod] = [:]

    /// The message type named, with or without a leading dot; the error says when it is missing.
    func messageType(_ name: String) throws(ProtoError) -> ProtoMessageType {
        let name = name.hasPrefix(".") ? String(name.dropFirst()) : name
        guard let type = messages[name] else {
            if enums[name] != nil { throw ProtoError("\(name) is an enum, not a message type") }
            throw ProtoError(
                "no message type \(name) in the descriptor set (was it made with protoc --include_imports?)")
        }
        return type
    }

    func enumType(_ name: String) throws(ProtoError) -> ProtoEnumType {
        guard let type = enums[name] else {
            throw ProtoError("no enum type \(name) in the descriptor set (was it made with protoc --include_imports?)")
        }
        return type
    }
}
