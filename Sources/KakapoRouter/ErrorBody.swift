import KakapoJSON

/// The bytes of Kakapo's own JSON bodies (errors, reports), for the engine and for transports that must
/// write an error below their HTTP encoder.
package enum ErrorBody {
    /// `value` laid out for people, with a trailing newline.
    package static func readable(_ value: JSONValue) -> [UInt8] {
        var bytes = JSONWriter(layout: .readable).write(value)
        bytes.append(UInt8(ascii: "\n"))
        return bytes
    }

    /// `{"error": message}` laid out for people, with a trailing newline.
    package static func error(_ message: String) -> [UInt8] { readable(["error": .string(message)]) }
}
