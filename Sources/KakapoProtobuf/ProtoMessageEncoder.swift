import KakapoJSON

/// Turns proto3 JSON into a message's bytes, fields in field-number order. Accepts JSON names and .proto
/// names, enum names or numbers, 64-bit integers as strings or numbers; errors name the JSON pointer.
struct ProtoMessageEncoder {
    let registry: ProtoRegistry

    /// The bytes of the message of type `typeName` that `json` describes.
    func message(_ json: JSONValue, type typeName: String, pointer: JSONPointer, depth: Int) throws(ProtoError)
        -> [UInt8]
    {
        guard depth <= ProtoLimits.maximumDepth else {
            throw ProtoError("\(pointer.place): messages nested deeper than \(ProtoLimits.maximumDepth) levels")
        }
        let type = try registry.messageType(typeName)
        if type.fullName == ProtoWellKnownTypes.any { return try any(json, pointer: pointer, depth: depth) }
        var json = json
        if ProtoWellKnownTypes.hasSpecialJSON(type.fullName) {
            json = try ProtoWellKnownJSON.generic(json, type: type.fullName, pointer: pointer)
        }
        guard let object = json.objectValue else {
            throw ProtoError("\(pointer.place): expected an object for a \(type.fullName), got \(json.kindDescription)")
        }
        var chosen: [(index: Int, value: JSONValue)] = []
        var keyOfIndex: [Int: String] = [:]
        var keyOfOneof: [Int: String] = [:]
        for (key, value) in object {
            guard let index = type.indexByName[key] else {
                throw ProtoError("\((pointer + key).place): \(type.fullName) has no field \"\(key)\"")
            }
            let field = type.fields[index]
            if let other = keyOfIndex[index] {
                throw ProtoError("\((pointer + key).place): field \(field.name) is given twice (also as \"\(other)\")")
            }
            keyOfIndex[index] = key
            // null stands for the default (absent), except where null is the value itself.
            if value.isNull && !Self.takesNull(field) { continue }
            if let oneof = field.oneofIndex {
                if let other = keyOfOneof[oneof] {
                    throw ProtoError("\((pointer + key).place): \"\(other)\" is already set, of the same oneof")
                }
                keyOfOneof[oneof] = key
            }
            chosen.append((index, value))
        }
        var writer = ProtoWireWriter()
        for (index, value) in chosen.sorted(by: { $0.index < $1.index }) {
            let field = type.fields[index]
            let key = keyOfIndex[index] ?? field.jsonName
            try write(field, value, pointer: pointer + key, depth: depth, into: &writer)
        }
        return writer.bytes
    }

    private static func takesNull(_ field: ProtoField) -> Bool {
        guard !field.isRepeated else { return false }
        switch field.kind {
        case .message(ProtoWellKnownTypes.value), .enumeration(ProtoWellKnownTypes.nullValue): return true
        default: return false
        }
    }

    private func write(
        _ field: ProtoField, _ value: JSONValue, pointer: JSONPointer, depth: Int, into writer: inout ProtoWireWriter
    ) throws(ProtoError) {
        if field.isMap {
            guard let object = value.objectValue else {
                throw ProtoError("\(pointer.place): expected an object for a map, got \(value.kindDescription)")
            }
            guard case .message(let entryName) = field.kind else { return }
            let entry = try registry.messageType(entryName)
            guard let keyField = entry.field(number: 1), let valueField = entry.field(number: 2) else {
                throw ProtoError("\(pointer.place): map entry \(entryName) lacks its key or value field")
            }
            for (key, member) in object {
                var entryWriter = ProtoWireWriter()
                let keyJSON: JSONValue
                switch keyField.kind {
                case .bool:
                    guard key == "true" || key == "false" else {
                        throw ProtoError("\((pointer + key).place): a map key of \"\(key)\", expected true or false")
                    }
                    keyJSON = .bool(key == "true")
                default: keyJSON = .string(key)
                }
                try single(
                    keyField, keyJSON, pointer: pointer + key, depth: depth, skipDefault: false, into: &entryWriter)
                let memberValue: JSONValue =
                    member.isNull && !Self.takesNull(valueField) ? .object(JSONObject()) : member
                if case .message = valueField.kind, member.isNull, !Self.takesNull(valueField) {
                    throw ProtoError("\((pointer + key).place): null is not a value of a map of \(valueField.kind)")
                }
                try single(
                    valueField, memberValue, pointer: pointer + key, depth: depth, skipDefault: false,
                    into: &entryWriter)
                writer.writeTag(number: field.number, wireType: 2)
                writer.writeLengthDelimited(entryWriter.bytes)
            }
        } else if field.isRepeated {
            guard let elements = value.arrayValue else {
                throw ProtoError("\(pointer.place): expected an array, got \(value.kindDescription)")
            }
            if field.isPacked {
                guard !elements.isEmpty else { return }
                var packed = ProtoWireWriter()
                for (offset, element) in elements.enumerated() {
                    try scalar(field.kind, element, pointer: pointer + String(offset)).write(into: &packed)
                }
                writer.writeTag(number: field.number, wireType: 2)
                writer.writeLengthDelimited(packed.bytes)
            } else {
                for (offset, element) in elements.enumerated() {
                    try single(
                        field, element, pointer: pointer + String(offset), depth: depth, skipDefault: false,
                        into: &writer)
                }
            }
        } else {
            try single(field, value, pointer: pointer, depth: depth, skipDefault: !field.hasPresence, into: &writer)
        }
    }

    /// One value of a field, with its tag; a scalar at its default is left out when `skipDefault`.
    private func single(
        _ field: ProtoField, _ value: JSONValue, pointer: JSONPointer, depth: Int, skipDefault: Bool,
        into writer: inout ProtoWireWriter
    ) throws(ProtoError) {
        switch field.kind {
        case .message(let name):
            let bytes = try message(value, type: name, pointer: pointer, depth: depth + 1)
            writer.writeTag(number: field.number, wireType: 2)
            writer.writeLengthDelimited(bytes)
        case .group(let name):
            let bytes = try message(value, type: name, pointer: pointer, depth: depth + 1)
            writer.writeTag(number: field.number, wireType: 3)
            writer.bytes.append(contentsOf: bytes)
            writer.writeTag(number: field.number, wireType: 4)
        default:
            let scalar = try scalar(field.kind, value, pointer: pointer)
            if skipDefault && scalar.isDefault { return }
            writer.writeTag(number: field.number, wireType: field.kind.wireType)
            scalar.write(into: &writer)
        }
    }

    /// An Any: the message its "@type" names, encoded from the other members (or from "value" for a
    /// well-known type), with the URL.
    private func any(_ json: JSONValue, pointer: JSONPointer, depth: Int) throws(ProtoError) -> [UInt8] {
        guard var object = json.objectValue else {
            throw ProtoError(
                "\(pointer.place): expected an object for a google.protobuf.Any, got \(json.kindDescription)")
        }
        if object.isEmpty { return [] }
        guard let url = object["@type"]?.stringValue else {
            throw ProtoError("\(pointer.place): a google.protobuf.Any without a string \"@type\"")
        }
        object["@type"] = nil
        let typeName = try ProtoWellKnownJSON.typeName(ofURL: url)
        let inner: JSONValue
        if ProtoWellKnownTypes.hasSpecialJSON(typeName) {
            guard let value = object["value"] else {
                throw ProtoError("\(pointer.place): an Any of \(typeName) without \"value\"")
            }
            inner = value
        } else {
            inner = .object(object)
        }
        let payload = try message(inner, type: typeName, pointer: pointer, depth: depth + 1)
        var writer = ProtoWireWriter()
        writer.writeTag(number: 1, wireType: 2)
        writer.writeLengthDelimited(Array(url.utf8))
        if !payload.isEmpty {
            writer.writeTag(number: 2, wireType: 2)
            writer.writeLengthDelimited(payload)
        }
        return writer.bytes
    }

    /// A scalar field's value from JSON, range-checked for its type.
    private func scalar(_ kind: ProtoFieldKind, _ json: JSONValue, pointer: JSONPointer) throws(ProtoError)
        -> ProtoWireScalar
    {
        func fail(_ expected: String) -> ProtoError {
            ProtoError("\(pointer.place): expected \(expected), got \(Self.describe(json))")
        }
        func integer() throws(ProtoError) -> ProtoJSONInteger {
            let text: String
            switch json {
            case .number(let number): text = number.literal
            case .string(let string): text = string
            default: throw fail("an integer")
            }
            guard let integer = ProtoJSONInteger(text) else { throw fail("an integer") }
            return integer
        }
        func signed(_ range: ClosedRange<Int64>, _ name: String) throws(ProtoError) -> Int64 {
            guard let value = try integer().int64, range.contains(value) else {
                throw fail("an integer in the range of \(name)")
            }
            return value
        }
        func unsigned(_ maximum: UInt64, _ name: String) throws(ProtoError) -> UInt64 {
            guard let value = try integer().uint64, value <= maximum else {
                throw fail("an integer in the range of \(name)")
            }
            return value
        }
        let int32Range = Int64(Int32.min)...Int64(Int32.max)
        switch kind {
        case .double:
            let value = try floatingPoint(json, fail: fail("a number, \"NaN\" or \"Infinity\""))
            guard value.isFinite || Self.isNamedSpecial(json) else { throw fail("a number in the range of a double") }
            return .fixed64(value.bitPattern, isDefault: value.bitPattern == 0)
        case .float:
            let value = try floatingPoint(json, fail: fail("a number, \"NaN\" or \"Infinity\""))
            let float = Float(value)
            guard float.isFinite || Self.isNamedSpecial(json) else { throw fail("a number in the range of a float") }
            return .fixed32(float.bitPattern, isDefault: float.bitPattern == 0)
        case .int64, .sint64, .sfixed64:
            let value = try signed(Int64.min...Int64.max, "int64")
            switch kind {
            case .sint64: return .varint(UInt64(bitPattern: (value << 1) ^ (value >> 63)), isDefault: value == 0)
            case .sfixed64: return .fixed64(UInt64(bitPattern: value), isDefault: value == 0)
            default: return .varint(UInt64(bitPattern: value), isDefault: value == 0)
            }
        case .uint64, .fixed64:
            let value = try unsigned(UInt64.max, "uint64")
            return kind == .fixed64 ? .fixed64(value, isDefault: value == 0) : .varint(value, isDefault: value == 0)
        case .int32, .sint32, .sfixed32:
            let value = Int32(try signed(int32Range, "int32"))
            switch kind {
            case .sint32:
                let zigzag = UInt32(bitPattern: (value << 1) ^ (value >> 31))
                return .varint(UInt64(zigzag), isDefault: value == 0)
            case .sfixed32: return .fixed32(UInt32(bitPattern: value), isDefault: value == 0)
            default: return .varint(UInt64(bitPattern: Int64(value)), isDefault: value == 0)
            }
        case .uint32, .fixed32:
            let value = UInt32(try unsigned(UInt64(UInt32.max), "uint32"))
            return kind == .fixed32
                ? .fixed32(value, isDefault: value == 0) : .varint(UInt64(value), isDefault: value == 0)
        case .bool:
            guard let value = json.boolValue else { throw fail("true or false") }
            return .varint(value ? 1 : 0, isDefault: !value)
        case .string:
            guard let value = json.stringValue else { throw fail("a string") }
            return .bytes(Array(value.utf8))
        case .bytes:
            guard let text = json.stringValue else { throw fail("a base64 string") }
            guard let value = ProtoBase64.decode(text) else { throw fail("a base64 string") }
            return .bytes(value)
        case .enumeration(let name):
            if name == ProtoWellKnownTypes.nullValue, json.isNull { return .varint(0, isDefault: true) }
            if let valueName = json.stringValue, ProtoJSONInteger(valueName) == nil {
                let type = try registry.enumType(name)
                guard let number = type.numberByName[valueName] else {
                    throw ProtoError("\(pointer.place): \"\(valueName)\" is not a value of \(name)")
                }
                return .varint(UInt64(bitPattern: Int64(number)), isDefault: number == 0)
            }
            let value = Int32(try signed(int32Range, "an enum"))
            return .varint(UInt64(bitPattern: Int64(value)), isDefault: value == 0)
        case .message, .group:
            throw fail("a message")
        }
    }

    private func floatingPoint(_ json: JSONValue, fail: @autoclosure () -> ProtoError) throws(ProtoError) -> Double {
        switch json {
        case .number(let number):
            guard let value = Double(number.literal) else { throw fail() }
            return value
        case .string("NaN"): return .nan
        case .string("Infinity"): return .infinity
        case .string("-Infinity"): return -.infinity
        case .string(let text):
            // A number in a string, in JSON's number syntax (Double() alone also takes "inf", "0x1p3").
            guard ProtoJSONInteger(text) != nil || Self.isJSONNumber(text), let value = Double(text) else {
                throw fail()
            }
            return value
        default: throw fail()
        }
    }

    private static func isNamedSpecial(_ json: JSONValue) -> Bool {
        json == .string("NaN") || json == .string("Infinity") || json == .string("-Infinity")
    }

    private static func isJSONNumber(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.count <= 400
            && text.utf8.allSatisfy {
                ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2D || $0 == 0x2B || $0 == 0x2E || $0 == 0x65 || $0 == 0x45
            }
            && (text.utf8.first.map { $0 >= 0x30 && $0 <= 0x39 || $0 == 0x2D } ?? false)
    }

    private static func describe(_ json: JSONValue) -> String {
        switch json {
        case .number(let number): "\(number.literal)"
        case .string(let string) where string.utf8.count <= 40: "\"\(string)\""
        default: json.kindDescription
        }
    }
}
