/// A scalar value ready for the wire, and whether it is its type's default (which proto3 leaves out).
enum ProtoWireScalar {
    case varint(UInt64, isDefault: Bool)
    case fixed32(UInt32, isDefault: Bool)
    case fixed64(UInt64, isDefault: Bool)
    case bytes([UInt8])

    var isDefault: Bool {
        switch self {
        case .varint(_, let isDefault), .fixed32(_, let isDefault), .fixed64(_, let isDefault): isDefault
        case .bytes(let bytes): bytes.isEmpty
        }
    }

    /// The value without its tag (a length prefix for bytes).
    func write(into writer: inout ProtoWireWriter) {
        switch self {
        case .varint(let value, _): writer.writeVarint(value)
        case .fixed32(let value, _): writer.writeFixed32(value)
        case .fixed64(let value, _): writer.writeFixed64(value)
        case .bytes(let bytes): writer.writeLengthDelimited(bytes)
        }
    }
}
