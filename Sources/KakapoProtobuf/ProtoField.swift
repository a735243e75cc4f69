/// One field of a message type, from a FieldDescriptorProto.
struct ProtoField: Sendable {
    /// The name in the .proto file ("snake_case").
    let name: String
    /// The JSON name (json_name, or the lowerCamelCase of `name`).
    let jsonName: String
    let number: Int
    let isRepeated: Bool
    var kind: ProtoFieldKind
    /// The index of the oneof it belongs to (a synthetic one for proto3 `optional` included), or nil.
    let oneofIndex: Int?
    /// True when a value at its default still counts as set (proto2 optional, proto3 `optional`, oneof
    /// members, messages), so it is written to JSON and to the wire.
    var hasPresence: Bool
    /// True when a repeated field of a packable kind is written packed.
    let isPacked: Bool
    /// True for a map field (a repeated map_entry message), written in JSON as an object.
    var isMap = false

    /// protoc's default JSON name: underscores dropped, the letter after each one upper-cased.
    static func jsonName(of name: String) -> String {
        var result = ""
        var upperNext = false
        for character in name {
            if character == "_" {
                upperNext = true
            } else if upperNext {
                result += character.uppercased()
                upperNext = false
            } else {
                result.append(character)
            }
        }
        return result
    }
}
