import KakapoJSON

/// The documents of one collection in insertion order, by the string form of their id, remembering the
/// kind of id its first document had so new ids follow it.
struct DocumentTable {
    var order: [String] = []
    var byID: [String: JSONObject] = [:]
    /// True when the collection's first document (the seed's, usually) had a number for its id: new ids
    /// are then numbers too. Set once, so it survives deleting every document.
    var numberIDs: Bool?
    /// The largest integer id ever kept (never lowered by a delete, so a new id never reuses an old one).
    var highestNumber: Int?

    mutating func put(_ document: JSONObject, id: String, idField: String) {
        if numberIDs == nil, let value = document[idField] {
            if case .number = value { numberIDs = true } else { numberIDs = false }
        }
        if case .number(let number)? = document[idField], let integer = number.intValue {
            highestNumber = max(highestNumber ?? integer, integer)
        }
        if byID.updateValue(document, forKey: id) == nil { order.append(id) }
    }

    mutating func remove(_ id: String) -> Bool {
        guard byID.removeValue(forKey: id) != nil else { return false }
        order.removeAll { $0 == id }
        return true
    }

    /// The next number id (`highestNumber + 1`, skipping any taken), or nil when ids are not numbers or
    /// the next one would overflow.
    func nextNumber() -> Int? {
        guard numberIDs == true else { return nil }
        var next = highestNumber ?? 0
        while true {
            let (sum, overflow) = next.addingReportingOverflow(1)
            if overflow { return nil }
            next = sum
            if byID[String(next)] == nil { return next }
        }
    }

    var all: [JSONObject] { order.compactMap { byID[$0] } }
}
