import KakapoJSON

/// Compares request bodies: JSON as JSON (key order and whitespace do not matter), anything else byte
/// for byte. A recorded body is parsed once, when it is indexed.
struct BodyMatcher: Sendable {
    let bytes: [UInt8]
    let json: JSONValue?

    init(_ bytes: [UInt8]) {
        self.bytes = bytes
        self.json = BodyMatcher.parseJSON(bytes)
    }

    static func parseJSON(_ bytes: [UInt8]) -> JSONValue? {
        guard let first = bytes.first(where: { $0 != 0x20 && $0 != 0x0A && $0 != 0x0D && $0 != 0x09 }),
            first == UInt8(ascii: "{") || first == UInt8(ascii: "[")
        else { return nil }
        return try? JSONParser.parse(bytes)
    }

    /// True when `other` is the same body as the recorded one.
    func matches(_ other: [UInt8], otherJSON: @autoclosure () -> JSONValue?) -> Bool {
        if bytes == other { return true }
        guard let json, let otherJSON = otherJSON() else { return false }
        return json.isEquivalent(to: otherJSON)
    }

    /// A short description of how `other` differs, for miss reports.
    func difference(from other: [UInt8]) -> String? {
        if matches(other, otherJSON: BodyMatcher.parseJSON(other)) { return nil }
        if bytes.isEmpty { return "the request has a body; the recorded one has none" }
        if other.isEmpty { return "the recorded request has a body; this one has none" }
        return json != nil ? "the JSON bodies differ" : "the bodies differ"
    }
}
