/// The well-known types (google/protobuf/*.proto) whose JSON form is special, defined here so they work
/// whether or not the descriptor set holds their files (a set made without --include_imports).
enum ProtoWellKnownTypes {
    static let timestamp = "google.protobuf.Timestamp"
    static let duration = "google.protobuf.Duration"
    static let empty = "google.protobuf.Empty"
    static let fieldMask = "google.protobuf.FieldMask"
    static let structType = "google.protobuf.Struct"
    static let value = "google.protobuf.Value"
    static let listValue = "google.protobuf.ListValue"
    static let any = "google.protobuf.Any"
    static let nullValue = "google.protobuf.NullValue"

    /// The wrapper types and what their `value` field holds.
    static let wrappers: [String: ProtoFieldKind] = [
        "google.protobuf.DoubleValue": .double, "google.protobuf.FloatValue": .float,
        "google.protobuf.Int64Value": .int64, "google.protobuf.UInt64Value": .uint64,
        "google.protobuf.Int32Value": .int32, "google.protobuf.UInt32Value": .uint32,
        "google.protobuf.BoolValue": .bool, "google.protobuf.StringValue": .string,
        "google.protobuf.BytesValue": .bytes,
    ]

    /// The types written in JSON as something other than an object of their fields. Inside an Any they
    /// go under "value"; Empty is not among them (an Any of Empty is `{"@type": ...}`).
    static func hasSpecialJSON(_ type: String) -> Bool {
        switch type {
        case timestamp, duration, fieldMask, structType, value, listValue, any: true
        default: wrappers[type] != nil
        }
    }

    /// Adds (or replaces) the well-known types in `registry`: the definitions here are the ones the JSON
    /// mapping's special cases are written against.
    static func register(into registry: inout ProtoRegistry) {
        func field(
            _ name: String, _ number: Int, _ kind: ProtoFieldKind, repeated: Bool = false, oneof: Int? = nil,
            map: Bool = false
        ) -> ProtoField {
            var field = ProtoField(
                name: name, jsonName: ProtoField.jsonName(of: name), number: number, isRepeated: repeated,
                kind: kind, oneofIndex: oneof, hasPresence: !repeated && (oneof != nil || kind.isMessageLike),
                isPacked: repeated && kind.isPackable)
            field.isMap = map
            return field
        }
        func add(_ name: String, _ fields: [ProtoField], mapEntry: Bool = false) {
            registry.messages[name] = ProtoMessageType(fullName: name, fields: fields, isMapEntry: mapEntry)
        }
        let seconds = [field("seconds", 1, .int64), field("nanos", 2, .int32)]
        add(timestamp, seconds)
        add(duration, seconds)
        for (name, kind) in wrappers { add(name, [field("value", 1, kind)]) }
        add(empty, [])
        add(fieldMask, [field("paths", 1, .string, repeated: true)])
        add(structType, [field("fields", 1, .message(structType + ".FieldsEntry"), repeated: true, map: true)])
        add(
            structType + ".FieldsEntry", [field("key", 1, .string), field("value", 2, .message(value))], mapEntry: true)
        add(
            value,
            [
                field("null_value", 1, .enumeration(nullValue), oneof: 0),
                field("number_value", 2, .double, oneof: 0), field("string_value", 3, .string, oneof: 0),
                field("bool_value", 4, .bool, oneof: 0), field("struct_value", 5, .message(structType), oneof: 0),
                field("list_value", 6, .message(listValue), oneof: 0),
            ])
        add(listValue, [field("values", 1, .message(value), repeated: true)])
        add(any, [field("type_url", 1, .string), field("value", 2, .bytes)])
        registry.enums[nullValue] = ProtoEnumType(
            fullName: nullValue, values: [(name: "NULL_VALUE", number: 0)], isClosed: false)
    }
}
