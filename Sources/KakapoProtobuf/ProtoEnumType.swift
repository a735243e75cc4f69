/// An enum type of the schema, from an EnumDescriptorProto.
struct ProtoEnumType: Sendable {
    /// Fully qualified, no leading dot.
    let fullName: String
    /// The first name declared for each number (aliases share a number).
    let nameByNumber: [Int32: String]
    let numberByName: [String: Int32]
    /// True for a proto2 (closed) enum, whose unknown numbers are not values of the field.
    let isClosed: Bool

    init(fullName: String, values: [(name: String, number: Int32)], isClosed: Bool) {
        self.fullName = fullName
        var nameByNumber: [Int32: String] = [:]
        var numberByName: [String: Int32] = [:]
        for value in values {
            if nameByNumber[value.number] == nil { nameByNumber[value.number] = value.name }
            numberByName[value.name] = value.number
        }
        self.nameByNumber = nameByNumber
        self.numberByName = numberByName
        self.isClosed = isClosed
    }
}
