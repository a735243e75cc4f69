/// One field's value as the wire format carries it, before a schema says what it means.
enum ProtoWireValue {
    case varint(UInt64)
    case fixed64(UInt64)
    case lengthDelimited(Range<Int>)
    case fixed32(UInt32)
    /// A group starts (wire type 3): its fields follow in the same reader, up to the matching end.
    case startGroup
    /// A group ends (wire type 4).
    case endGroup

    /// The wire type's number, for messages.
    var wireType: Int {
        switch self {
        case .varint: 0
        case .fixed64: 1
        case .lengthDelimited: 2
        case .startGroup: 3
        case .endGroup: 4
        case .fixed32: 5
        }
    }
}

/// Reads the Protocol Buffers wire format from a part of a byte array. Every length is checked against
/// the bytes that remain before it is used, so hostile input ends in a `ProtoError`, never a trap; a
/// nested message reads the same array through a reader of its own range, so nothing is copied.
struct ProtoWireReader {
    /// The largest field number the format allows (2^29 - 1).
    static let maximumFieldNumber = 536_870_911

    let bytes: [UInt8]
    /// The next byte to read, as an index into `bytes` (so errors can say where, from the outermost start).
    private(set) var index: Int
    let end: Int

    init(bytes: [UInt8]) {
        self.bytes = bytes
        self.index = 0
        self.end = bytes.count
    }

    /// A reader of `range` of `bytes`; the range comes from `readLength()` of another reader, so it is in bounds.
    init(bytes: [UInt8], range: Range<Int>) {
        self.bytes = bytes
        self.index = range.lowerBound
        self.end = range.upperBound
    }

    var isAtEnd: Bool { index >= end }

    /// A base-128 varint of at most 10 bytes whose value fits 64 bits.
    mutating func readVarint() throws(ProtoError) -> UInt64 {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        for count in 0..<10 {
            guard index < end else { throw ProtoError("a varint cut short at byte \(index)") }
            let byte = bytes[index]
            index += 1
            if count == 9, byte > 1 {
                throw ProtoError(
                    byte & 0x80 != 0
                        ? "a varint longer than 10 bytes at byte \(index - 10)"
                        : "a varint larger than 64 bits at byte \(index - 10)")
            }
            result |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 { return result }
            shift += 7
        }
        throw ProtoError("a varint longer than 10 bytes at byte \(index - 10)")
    }

    mutating func readFixed32() throws(ProtoError) -> UInt32 {
        guard end - index >= 4 else { throw ProtoError("a 4-byte value cut short at byte \(index)") }
        var value: UInt32 = 0
        for offset in 0..<4 { value |= UInt32(bytes[index + offset]) << (8 * offset) }
        index += 4
        return value
    }

    mutating func readFixed64() throws(ProtoError) -> UInt64 {
        guard end - index >= 8 else { throw ProtoError("an 8-byte value cut short at byte \(index)") }
        var value: UInt64 = 0
        for offset in 0..<8 { value |= UInt64(bytes[index + offset]) << (8 * offset) }
        index += 8
        return value
    }

    /// A length prefix and the range of the bytes it covers, which must all be there.
    mutating func readLengthDelimited() throws(ProtoError) -> Range<Int> {
        let start = index
        let length = try readVarint()
        guard length <= UInt64(end - index) else {
            throw ProtoError("a length of \(length) at byte \(start) but only \(end - index) bytes remain")
        }
        let range = index..<(index + Int(length))
        index = range.upperBound
        return range
    }

    /// The next field's number and value, or nil at the end. A group's contents are left to read
    /// (`.startGroup`) or to skip with `skipGroup(number:depth:)`.
    mutating func readField() throws(ProtoError) -> (number: Int, value: ProtoWireValue)? {
        guard index < end else { return nil }
        let start = index
        let tag = try readVarint()
        guard tag <= UInt64(UInt32.max) else { throw ProtoError("a field tag larger than 32 bits at byte \(start)") }
        let number = Int(tag >> 3)
        guard number >= 1, number <= Self.maximumFieldNumber else {
            throw ProtoError("field number \(number) at byte \(start) (field numbers run from 1 to 536870911)")
        }
        switch tag & 7 {
        case 0: return (number, .varint(try readVarint()))
        case 1: return (number, .fixed64(try readFixed64()))
        case 2: return (number, .lengthDelimited(try readLengthDelimited()))
        case 3: return (number, .startGroup)
        case 4: return (number, .endGroup)
        case 5: return (number, .fixed32(try readFixed32()))
        default:
            throw ProtoError("wire type \(tag & 7) of field \(number) at byte \(start) (there is no such wire type)")
        }
    }

    /// Skips the rest of a group whose start tag was just read, nested groups included, and its end tag;
    /// returns where the end tag started (so the group's contents are what lies before it).
    @discardableResult
    mutating func skipGroup(number: Int, depth: Int) throws(ProtoError) -> Int {
        guard depth < ProtoLimits.maximumDepth else {
            throw ProtoError("groups nested deeper than \(ProtoLimits.maximumDepth) levels at byte \(index)")
        }
        while true {
            let start = index
            guard let field = try readField() else { break }
            switch field.value {
            case .startGroup: try skipGroup(number: field.number, depth: depth + 1)
            case .endGroup:
                guard field.number == number else {
                    throw ProtoError("group \(number) ended by the end tag of group \(field.number) at byte \(start)")
                }
                return start
            default: continue
            }
        }
        throw ProtoError("group \(number) has no end tag")
    }
}
