import KakapoJSON

/// A map field's entries as read, in first-seen order; a key seen again replaces its value (the wire
/// format's rule), so the JSON object never has a key twice.
struct ProtoMapEntries {
    private(set) var entries: [(String, JSONValue)] = []
    private var indexByKey: [String: Int] = [:]

    mutating func set(_ key: String, _ value: JSONValue) {
        if let index = indexByKey[key] {
            entries[index].1 = value
        } else {
            indexByKey[key] = entries.count
            entries.append((key, value))
        }
    }
}
