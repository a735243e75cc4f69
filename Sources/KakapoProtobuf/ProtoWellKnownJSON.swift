import KakapoJSON

/// The JSON forms of the well-known types: from the object of their fields to their special form
/// (a Timestamp's RFC 3339 string, a Struct's plain object) and back.
enum ProtoWellKnownJSON {
    // MARK: Fields to the special form

    /// The special JSON of a well-known type, given the object of its fields (default fields left out).
    static func special(_ object: JSONObject, type: String, depth: Int, decoder: ProtoMessageDecoder)
        throws(ProtoError) -> JSONValue
    {
        switch type {
        case ProtoWellKnownTypes.timestamp:
            let (seconds, nanos) = secondsAndNanos(object)
            return .string(try ProtoTime.timestamp(seconds: seconds, nanos: nanos))
        case ProtoWellKnownTypes.duration:
            let (seconds, nanos) = secondsAndNanos(object)
            return .string(try ProtoTime.duration(seconds: seconds, nanos: nanos))
        case ProtoWellKnownTypes.fieldMask:
            let paths = object["paths"]?.arrayValue?.compactMap(\.stringValue) ?? []
            return .string(paths.map { ProtoField.jsonName(of: $0) }.joined(separator: ","))
        case ProtoWellKnownTypes.structType:
            return object["fields"] ?? .object(JSONObject())
        case ProtoWellKnownTypes.value:
            // The one member of the `kind` oneof; a Value with none set is written as null.
            return object.members.first?.value ?? .null
        case ProtoWellKnownTypes.listValue:
            return object["values"] ?? .array([])
        case ProtoWellKnownTypes.any:
            return try any(object, depth: depth, decoder: decoder)
        default:
            guard let kind = ProtoWellKnownTypes.wrappers[type] else { return .object(object) }
            if let value = object["value"] { return value }
            return try decoder.defaultValue(kind, depth: depth)
        }
    }

    private static func secondsAndNanos(_ object: JSONObject) -> (Int64, Int32) {
        let seconds = object["seconds"]?.stringValue.flatMap { Int64($0) } ?? 0
        let nanos = object["nanos"]?.numberValue.flatMap { Int32($0.literal) } ?? 0
        return (seconds, nanos)
    }

    /// `{"@type": url, fields...}`, or `{"@type": url, "value": special}` for a well-known type inside.
    private static func any(_ object: JSONObject, depth: Int, decoder: ProtoMessageDecoder) throws(ProtoError)
        -> JSONValue
    {
        let url = object["typeUrl"]?.stringValue ?? ""
        let payload = object["value"]?.stringValue.flatMap(ProtoBase64.decode) ?? []
        if url.isEmpty && payload.isEmpty { return .object(JSONObject()) }
        let typeName = try typeName(ofURL: url)
        let inner = ProtoMessageDecoder(registry: decoder.registry, bytes: payload)
        let value = try inner.message(0..<payload.count, type: typeName, depth: depth + 1)
        var result = JSONObject([("@type", .string(url))])
        if ProtoWellKnownTypes.hasSpecialJSON(typeName) {
            result.append(key: "value", value: value)
        } else {
            for (key, member) in value.objectValue ?? JSONObject() { result.append(key: key, value: member) }
        }
        return .object(result)
    }

    /// The message type an Any's URL names: what follows its last slash.
    static func typeName(ofURL url: String) throws(ProtoError) -> String {
        guard let name = url.split(separator: "/", omittingEmptySubsequences: false).last, !name.isEmpty else {
            throw ProtoError("an Any whose type URL \"\(url)\" names no type")
        }
        return String(name)
    }

    // MARK: The special form to fields

    /// The object of fields a well-known type's special JSON stands for; `pointer` names it in errors.
    /// (Any is written by the encoder itself, which must encode what it holds.)
    static func generic(_ json: JSONValue, type: String, pointer: JSONPointer) throws(ProtoError) -> JSONValue {
        func fail(_ expected: String) -> ProtoError {
            ProtoError("\(pointer.place): expected \(expected) for a \(type), got \(json.kindDescription)")
        }
        switch type {
        case ProtoWellKnownTypes.timestamp, ProtoWellKnownTypes.duration:
            let isTimestamp = type == ProtoWellKnownTypes.timestamp
            guard let text = json.stringValue else { throw fail("a string") }
            guard let (seconds, nanos) = isTimestamp ? ProtoTime.parseTimestamp(text) : ProtoTime.parseDuration(text)
            else {
                throw ProtoError(
                    "\(pointer.place): \"\(text)\" is not a \(isTimestamp ? "Timestamp (RFC 3339, years 1 to 9999)" : "Duration (like \"1.5s\")")"
                )
            }
            return .object(
                JSONObject([("seconds", .string(String(seconds))), ("nanos", .number(JSONNumber(Int(nanos))))]))
        case ProtoWellKnownTypes.fieldMask:
            guard let text = json.stringValue else { throw fail("a string") }
            var paths: [JSONValue] = []
            for path in text.split(separator: ",") {
                guard !path.contains("_") else {
                    throw ProtoError("\(pointer.place): the FieldMask path \"\(path)\" is not lowerCamelCase")
                }
                paths.append(.string(snakeCase(path)))
            }
            return .object(JSONObject([("paths", .array(paths))]))
        case ProtoWellKnownTypes.structType:
            guard json.objectValue != nil else { throw fail("an object") }
            return .object(JSONObject([("fields", json)]))
        case ProtoWellKnownTypes.listValue:
            guard json.arrayValue != nil else { throw fail("an array") }
            return .object(JSONObject([("values", json)]))
        case ProtoWellKnownTypes.value:
            let member: String
            switch json {
            case .null: return .object(JSONObject([("nullValue", .number(JSONNumber(0)))]))
            case .number: member = "numberValue"
            case .string: member = "stringValue"
            case .bool: member = "boolValue"
            case .object: member = "structValue"
            case .array: member = "listValue"
            }
            return .object(JSONObject([(member, json)]))
        default:
            guard ProtoWellKnownTypes.wrappers[type] != nil else { return json }
            return .object(JSONObject([("value", json)]))
        }
    }

    private static func snakeCase(_ path: Substring) -> String {
        var result = ""
        for character in path {
            if character.isUppercase {
                result += "_" + character.lowercased()
            } else {
                result.append(character)
            }
        }
        return result
    }
}
