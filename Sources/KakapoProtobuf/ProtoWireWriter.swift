/// Appends the Protocol Buffers wire format to a byte array.
struct ProtoWireWriter {
    var bytes: [UInt8] = []

    mutating func writeVarint(_ value: UInt64) {
        var value = value
        while value >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        bytes.append(UInt8(value))
    }

    /// A field's tag: its number and wire type (0 varint, 1 fixed64, 2 length-delimited, 3/4 group, 5 fixed32).
    mutating func writeTag(number: Int, wireType: Int) {
        writeVarint(UInt64(UInt32(truncatingIfNeeded: number << 3 | wireType)))
    }

    mutating func writeFixed32(_ value: UInt32) {
        for offset in 0..<4 { bytes.append(UInt8(truncatingIfNeeded: value >> (8 * offset))) }
    }

    mutating func writeFixed64(_ value: UInt64) {
        for offset in 0..<8 { bytes.append(UInt8(truncatingIfNeeded: value >> (8 * offset))) }
    }

    /// A length prefix and the bytes.
    mutating func writeLengthDelimited(_ payload: [UInt8]) {
        writeVarint(UInt64(payload.count))
        bytes.append(contentsOf: payload)
    }
}
