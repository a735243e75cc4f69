/// A message type of the schema, from a DescriptorProto: its fields by number and by JSON and .proto name.
struct ProtoMessageType: Sendable {
    /// Fully qualified, no leading dot.
    let fullName: String
    /// The fields in field-number order.
    private(set) var fields: [ProtoField]
    private(set) var indexByNumber: [Int: Int]
    /// Field indexes by JSON name and by .proto name (JSON input may use either).
    private(set) var indexByName: [String: Int]
    /// True for the synthetic entry type of a map field.
    let isMapEntry: Bool

    init(fullName: String, fields: [ProtoField], isMapEntry: Bool) {
        self.fullName = fullName
        self.fields = fields.sorted { $0.number < $1.number }
        self.isMapEntry = isMapEntry
        var byNumber: [Int: Int] = [:]
        var byName: [String: Int] = [:]
        for (index, field) in self.fields.enumerated() {
            byNumber[field.number] = index
            byName[field.name] = index
        }
        // JSON names win over .proto names where they clash (they would be ambiguous; protoc refuses them).
        for (index, field) in self.fields.enumerated() { byName[field.jsonName] = index }
        self.indexByNumber = byNumber
        self.indexByName = byName
    }

    func field(number: Int) -> ProtoField? {
        indexByNumber[number].map { fields[$0] }
    }

    /// Changes fields once every type is known (resolved type names, map fields).
    mutating func updateFields(_ body: (inout ProtoField) throws(ProtoError) -> Void) throws(ProtoError) {
        for index in fields.indices { try body(&fields[index]) }
    }
}
