/// One header field as bytes, the way it stands on the wire or in a cassette, so that a round trip can be
/// compared byte for byte whatever the representation in between does with text.
struct RawField: Equatable {
    var name: [UInt8]
    var value: [UInt8]

    init(_ name: [UInt8], _ value: [UInt8]) {
        self.name = name
        self.value = value
    }

    init(_ name: String, _ value: String) {
        self.init(Array(name.utf8), Array(value.utf8))
    }

    /// The name with ASCII letters lowercased: how HTTP compares names.
    var canonicalName: [UInt8] { name.map { (0x41...0x5A).contains($0) ? $0 + 0x20 : $0 } }

    /// `Name: value` with control bytes, non-ASCII bytes and the edges of the value made visible.
    var shown: String { "\(Self.escape(name)): \"\(Self.escape(value))\"" }

    static func escape(_ bytes: [UInt8]) -> String {
        var text = ""
        for byte in bytes {
            switch byte {
            case 0x20...0x7E where byte != UInt8(ascii: "\\") && byte != UInt8(ascii: "\""):
                text.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                text += "\\x" + (byte < 0x10 ? "0" : "") + String(byte, radix: 16, uppercase: true)
            }
        }
        return text
    }
}

/// The header fields of one request or response head, and where they were found.
struct FieldList {
    var source: String
    var isRequest: Bool
    var fields: [RawField]
}
