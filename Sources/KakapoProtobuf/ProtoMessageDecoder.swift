import KakapoJSON

/// Turns a message's bytes into proto3 JSON. Fields are gathered first and written once the whole
/// message is read, since the wire format may repeat a field (the last scalar wins, messages merge, a
/// oneof keeps its last member). Unknown fields are dropped: JSON has no place for them.
struct ProtoMessageDecoder {
    let registry: ProtoRegistry
    let bytes: [UInt8]

    /// What has been read of one message, by field index.
    private struct Gathered {
        var singles: [Int: (value: JSONValue, isDefault: Bool)] = [:]
        /// The byte ranges of each occurrence of a singular message (or a group's contents): merged on output.
        var parts: [Int: [Range<Int>]] = [:]
        var lists: [Int: [JSONValue]] = [:]
        var maps: [Int: ProtoMapEntries] = [:]
        /// The field index last set in each oneof.
        var chosen: [Int: Int] = [:]

        mutating func forget(_ index: Int) {
            singles[index] = nil
            parts[index] = nil
            lists[index] = nil
            maps[index] = nil
        }
    }

    /// The JSON of the message of type `typeName` in `range` of the bytes.
    func message(_ range: Range<Int>, type typeName: String, depth: Int) throws(ProtoError) -> JSONValue {
        try message([range], type: try registry.messageType(typeName), depth: depth)
    }

    /// The JSON of one message made of several parts (which the wire format merges).
    private func message(_ ranges: [Range<Int>], type: ProtoMessageType, depth: Int) throws(ProtoError) -> JSONValue {
        guard depth <= ProtoLimits.maximumDepth else {
            throw ProtoError("messages nested deeper than \(ProtoLimits.maximumDepth) levels", isLocated: true)
        }
        var gathered = Gathered()
        for range in ranges { try gather(range, type: type, into: &gathered, depth: depth) }
        return try output(gathered, type: type, depth: depth)
    }

    private func gather(_ range: Range<Int>, type: ProtoMessageType, into gathered: inout Gathered, depth: Int)
        throws(ProtoError)
    {
        var reader = ProtoWireReader(bytes: bytes, range: range)
        while true {
            let start = reader.index
            let next: (number: Int, value: ProtoWireValue)?
            do {
                next = try reader.readField()
            } catch {
                throw ProtoError("\(type.fullName): \(error.message)", isLocated: true)
            }
            guard let (number, value) = next else { return }
            guard let index = type.indexByNumber[number] else {
                // Unknown fields are skipped (their bytes are checked, so a broken message is still an error).
                switch value {
                case .startGroup:
                    do {
                        _ = try reader.skipGroup(number: number, depth: depth)
                    } catch {
                        throw ProtoError("field \(number) of \(type.fullName): \(error.message)", isLocated: true)
                    }
                case .endGroup:
                    throw ProtoError(
                        "\(type.fullName): an end-group tag without a group at byte \(start)", isLocated: true)
                default: break
                }
                continue
            }
            let field = type.fields[index]
            do {
                try gather(field, index: index, value: value, reader: &reader, into: &gathered, depth: depth)
            } catch  where error.isLocated {
                throw error
            } catch {
                throw ProtoError(
                    "field \(number) (\(field.name)) of \(type.fullName) at byte \(start): \(error.message)",
                    isLocated: true)
            }
        }
    }

    private func gather(
        _ field: ProtoField, index: Int, value: ProtoWireValue, reader: inout ProtoWireReader,
        into gathered: inout Gathered, depth: Int
    ) throws(ProtoError) {
        if let oneof = field.oneofIndex {
            if let previous = gathered.chosen[oneof], previous != index { gathered.forget(previous) }
            gathered.chosen[oneof] = index
        }
        switch field.kind {
        case .message(let typeName), .group(let typeName):
            let range: Range<Int>
            if case .group = field.kind {
                guard case .startGroup = value else { throw Self.wrongWireType(value, expected: 3) }
                let start = reader.index
                range = start..<(try reader.skipGroup(number: field.number, depth: depth))
            } else {
                guard case .lengthDelimited(let delimited) = value else { throw Self.wrongWireType(value, expected: 2) }
                range = delimited
            }
            if field.isMap {
                let (key, value) = try mapEntry(range, type: typeName, depth: depth)
                gathered.maps[index, default: ProtoMapEntries()].set(key, value)
            } else if field.isRepeated {
                let type = try registry.messageType(typeName)
                gathered.lists[index, default: []].append(try message([range], type: type, depth: depth + 1))
            } else {
                gathered.parts[index, default: []].append(range)
            }
        default:
            if field.isRepeated, field.kind.isPackable, case .lengthDelimited(let range) = value {
                var packed = ProtoWireReader(bytes: bytes, range: range)
                var values = gathered.lists[index] ?? []
                gathered.lists[index] = nil
                while !packed.isAtEnd {
                    let element: ProtoWireValue
                    switch field.kind.wireType {
                    case 1: element = .fixed64(try packed.readFixed64())
                    case 5: element = .fixed32(try packed.readFixed32())
                    default: element = .varint(try packed.readVarint())
                    }
                    if let scalar = try scalar(field.kind, element) { values.append(scalar.value) }
                }
                gathered.lists[index] = values
                return
            }
            guard value.wireType == field.kind.wireType else {
                throw Self.wrongWireType(value, expected: field.kind.wireType)
            }
            // nil: a number a closed (proto2) enum does not define, which is not a value of the field.
            guard let scalar = try scalar(field.kind, value) else { return }
            if field.isRepeated {
                gathered.lists[index, default: []].append(scalar.value)
            } else {
                gathered.singles[index] = scalar
            }
        }
    }

    /// A map entry's key (as a JSON object key) and value; either may be missing and then is its default.
    private func mapEntry(_ range: Range<Int>, type typeName: String, depth: Int) throws(ProtoError)
        -> (String, JSONValue)
    {
        let type = try registry.messageType(typeName)
        var gathered = Gathered()
        try gather(range, type: type, into: &gathered, depth: depth)
        let entry = try output(gathered, type: type, depth: depth, keepDefaults: true)
        guard let keyField = type.field(number: 1), let valueField = type.field(number: 2) else {
            throw ProtoError("map entry \(typeName) lacks its key or value field")
        }
        let key: String
        var keyValue = entry[keyField.jsonName]
        if keyValue == nil { keyValue = try defaultValue(keyField.kind, depth: depth) }
        switch keyValue ?? .null {
        case .string(let string): key = string
        case .number(let number): key = number.literal
        case .bool(let bool): key = bool ? "true" : "false"
        default: throw ProtoError("map entry \(typeName) has a key of a kind maps cannot have")
        }
        if let value = entry[valueField.jsonName] { return (key, value) }
        return (key, try defaultValue(valueField.kind, depth: depth + 1))
    }

    /// The JSON object of what was gathered, fields in field-number order, then a well-known type's form.
    private func output(_ gathered: Gathered, type: ProtoMessageType, depth: Int, keepDefaults: Bool = false)
        throws(ProtoError) -> JSONValue
    {
        var object = JSONObject()
        for (index, field) in type.fields.enumerated() {
            if let oneof = field.oneofIndex, gathered.chosen[oneof] != index { continue }
            if let map = gathered.maps[index] {
                object.append(key: field.jsonName, value: .object(JSONObject(map.entries)))
            } else if let list = gathered.lists[index], !list.isEmpty {
                object.append(key: field.jsonName, value: .array(list))
            } else if let parts = gathered.parts[index], case .message(let name) = field.kind {
                let value = try message(parts, type: try registry.messageType(name), depth: depth + 1)
                object.append(key: field.jsonName, value: value)
            } else if let parts = gathered.parts[index], case .group(let name) = field.kind {
                let value = try message(parts, type: try registry.messageType(name), depth: depth + 1)
                object.append(key: field.jsonName, value: value)
            } else if let single = gathered.singles[index], !single.isDefault || field.hasPresence || keepDefaults {
                object.append(key: field.jsonName, value: single.value)
            }
        }
        guard ProtoWellKnownTypes.hasSpecialJSON(type.fullName) else { return .object(object) }
        return try ProtoWellKnownJSON.special(object, type: type.fullName, depth: depth, decoder: self)
    }

    /// The JSON of a field of `kind` at its default value (for map entries that leave one out).
    func defaultValue(_ kind: ProtoFieldKind, depth: Int) throws(ProtoError) -> JSONValue {
        switch kind {
        case .message(let name), .group(let name):
            return try message([], type: try registry.messageType(name), depth: depth)
        case .enumeration:
            return try scalar(kind, .varint(0))?.value ?? .number(JSONNumber(0))
        case .int64, .uint64, .fixed64, .sfixed64, .sint64: return .string("0")
        case .bool: return .bool(false)
        case .string, .bytes: return .string("")
        default: return .number(JSONNumber(0))
        }
    }

    /// A scalar's JSON and whether it is the type's default; nil for an undefined number of a closed enum.
    private func scalar(_ kind: ProtoFieldKind, _ value: ProtoWireValue) throws(ProtoError)
        -> (value: JSONValue, isDefault: Bool)?
    {
        switch (kind, value) {
        case (.double, .fixed64(let bits)): return (Self.json(Double(bitPattern: bits)), bits == 0)
        case (.float, .fixed32(let bits)): return (Self.json(Float(bitPattern: bits)), bits == 0)
        case (.int64, .varint(let raw)), (.sfixed64, .fixed64(let raw)):
            return (.string(String(Int64(bitPattern: raw))), raw == 0)
        case (.uint64, .varint(let raw)), (.fixed64, .fixed64(let raw)): return (.string(String(raw)), raw == 0)
        case (.sint64, .varint(let raw)):
            let number = Int64(bitPattern: raw >> 1) ^ -Int64(bitPattern: raw & 1)
            return (.string(String(number)), raw == 0)
        case (.int32, .varint(let raw)):
            let number = Int32(truncatingIfNeeded: raw)
            return (.number(JSONNumber(Int(number))), number == 0)
        case (.uint32, .varint(let raw)):
            let number = UInt32(truncatingIfNeeded: raw)
            return (.number(JSONNumber(Int(number))), number == 0)
        case (.sint32, .varint(let raw)):
            let bits = UInt32(truncatingIfNeeded: raw)
            let number = Int32(bitPattern: bits >> 1) ^ -Int32(bitPattern: bits & 1)
            return (.number(JSONNumber(Int(number))), number == 0)
        case (.fixed32, .fixed32(let raw)): return (.number(JSONNumber(Int(raw))), raw == 0)
        case (.sfixed32, .fixed32(let raw)): return (.number(JSONNumber(Int(Int32(bitPattern: raw)))), raw == 0)
        case (.bool, .varint(let raw)): return (.bool(raw != 0), raw == 0)
        case (.string, .lengthDelimited(let range)):
            guard let string = String(validating: bytes[range], as: UTF8.self) else {
                throw ProtoError("a string that is not UTF-8")
            }
            return (.string(string), range.isEmpty)
        case (.bytes, .lengthDelimited(let range)): return (.string(ProtoBase64.encode(bytes[range])), range.isEmpty)
        case (.enumeration(let name), .varint(let raw)):
            let number = Int32(truncatingIfNeeded: raw)
            if name == ProtoWellKnownTypes.nullValue { return (.null, number == 0) }
            let type = try registry.enumType(name)
            if let valueName = type.nameByNumber[number] { return (.string(valueName), number == 0) }
            if type.isClosed { return nil }
            return (.number(JSONNumber(Int(number))), number == 0)
        default:
            throw Self.wrongWireType(value, expected: kind.wireType)
        }
    }

    static func json(_ value: Double) -> JSONValue {
        if value.isNaN { return .string("NaN") }
        if value.isInfinite { return .string(value < 0 ? "-Infinity" : "Infinity") }
        return .number(JSONNumber(literal: "\(value)"))
    }

    static func json(_ value: Float) -> JSONValue {
        if value.isNaN { return .string("NaN") }
        if value.isInfinite { return .string(value < 0 ? "-Infinity" : "Infinity") }
        return .number(JSONNumber(literal: "\(value)"))
    }

    private static func wrongWireType(_ value: ProtoWireValue, expected: Int) -> ProtoError {
        ProtoError("wire type \(value.wireType), but the field's type is written with wire type \(expected)")
    }
}
