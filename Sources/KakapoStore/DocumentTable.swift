import KakapoJSON

/// The documents of one collection in insertion order, by the string form of their id.
struct DocumentTable {
    var order: [String] = []
    var byID: [String: JSONObject] = [:]

    mutating func put(_ document: JSONObject, id: String) {
        if byID.updateValue(document, forKey: id) == nil { order.append(id) }
    }

    mutating func remove(_ id: String) -> Bool {
        guard byID.removeValue(forKey: id) != nil else { return false }
        order.removeAll { $0 == id }
        return true
    }

    var all: [JSONObject] { order.compactMap { byID[$0] } }
}
