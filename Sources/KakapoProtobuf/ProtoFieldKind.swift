/// What a field holds: one of the scalar types, or an enum, message or group named by its fully
/// qualified name (no leading dot).
enum ProtoFieldKind: Hashable, Sendable {
    case double, float, int64, uint64, int32, fixed64, fixed32, bool, string, bytes, uint32, sfixed32, sfixed64
    case sint32, sint64
    case enumeration(String)
    case message(String)
    case group(String)

    /// The kind FieldDescriptorProto.type names (1...18), with the type name for enums, messages and groups.
    init?(descriptorType: UInt64, typeName: String) {
        switch descriptorType {
        case 1: self = .double
        case 2: self = .float
        case 3: self = .int64
        case 4: self = .uint64
        case 5: self = .int32
        case 6: self = .fixed64
        case 7: self = .fixed32
        case 8: self = .bool
        case 9: self = .string
        case 10: self = .group(typeName)
        case 11: self = .message(typeName)
        case 12: self = .bytes
        case 13: self = .uint32
        case 14: self = .enumeration(typeName)
        case 15: self = .sfixed32
        case 16: self = .sfixed64
        case 17: self = .sint32
        case 18: self = .sint64
        default: return nil
        }
    }

    /// The wire type a single value of this kind uses (packed repeated fields use 2 around them).
    var wireType: Int {
        switch self {
        case .double, .fixed64, .sfixed64: 1
        case .float, .fixed32, .sfixed32: 5
        case .string, .bytes, .message: 2
        case .group: 3
        default: 0
        }
    }

    /// True for the kinds a repeated field may pack: every scalar but strings and bytes.
    var isPackable: Bool {
        switch self {
        case .string, .bytes, .message, .group: false
        default: true
        }
    }
}
