import Foundation
import KakapoJSON
import OpenAPIKit

/// Checks a JSON value against an OpenAPIKit schema: types (with `nullable`/`type: [.., null]`), `enum`
/// and `const`, string length, `pattern` and the formats `date-time`, `date`, `time`, `uuid`, `email`,
/// `ipv4`; number bounds and `multipleOf`; array items, `prefixItems`, sizes and `uniqueItems`; object
/// `properties`, `required`, `additionalProperties`, `patternProperties`, sizes; `allOf`, `anyOf`, `oneOf`
/// (by `discriminator` when there is one) and `not`; `$ref` into `components`. A required `readOnly`
/// property may be missing from a request and a required `writeOnly` one from a response.
///
/// OpenAPIKit reads `type: [a, b]` as its first type (plus `null`), so such schemas are checked against
/// that type only.
final class SchemaValidator {
    /// Which side of the exchange the value is, for `readOnly` and `writeOnly`.
    enum Direction {
        case request
        case response
    }

    struct Violation: Equatable {
        let pointer: JSONPointer
        let message: String
    }

    let components: OpenAPIKit.OpenAPI.Components
    let direction: Direction
    private var expressions: [String: NSRegularExpression?] = [:]
    private static let maximumDepth = 64

    init(components: OpenAPIKit.OpenAPI.Components, direction: Direction) {
        self.components = components
        self.direction = direction
    }

    func validate(_ value: JSONValue, against schema: JSONSchema, at pointer: JSONPointer = JSONPointer(components: []))
        -> [Violation]
    {
        validate(value, schema, pointer, depth: 0)
    }

    private func validate(_ value: JSONValue, _ schema: JSONSchema, _ pointer: JSONPointer, depth: Int) -> [Violation] {
        guard depth < Self.maximumDepth else { return [] }
        func violation(_ message: String) -> [Violation] { [Violation(pointer: pointer, message: message)] }
        if value.isNull && schema.nullable { return [] }
        var found: [Violation] = []
        if let allowed = schema.allowedValues, !allowed.isEmpty {
            let choices = allowed.map(Self.json)
            if !choices.contains(value) {
                let listed = choices.prefix(8).map(Self.describe).joined(separator: ", ")
                found += violation("\(Self.describe(value)) is not one of \(listed)\(choices.count > 8 ? ", …" : "")")
            }
        }
        switch schema.value {
        case .reference(let reference, _):
            guard let resolved = try? components.lookupOnce(schema) else {
                return found + violation("the schema's $ref \(reference.absoluteString) cannot be resolved")
            }
            return found + validate(value, resolved, pointer, depth: depth + 1)
        case .fragment:
            return found
        case .null:
            return found + (value.isNull ? [] : violation("expected null, got \(Self.describe(value))"))
        case .boolean:
            return found + (value.boolValue != nil ? [] : violation("expected a boolean, got \(Self.describe(value))"))
        case .number(_, let context):
            guard let number = value.numberValue else {
                return found + violation("expected a number, got \(Self.describe(value))")
            }
            return found + checkBounds(number, context, pointer)
        case .integer(_, let context):
            guard let number = value.numberValue, Self.isIntegral(number) else {
                return found + violation("expected an integer, got \(Self.describe(value))")
            }
            return found + checkBounds(number, context.numericContext, pointer)
        case .string(let core, let context):
            guard let string = value.stringValue else {
                return found + violation("expected a string, got \(Self.describe(value))")
            }
            return found + checkString(string, format: core.formatString, context, pointer)
        case .array(_, let context):
            guard let items = value.arrayValue else {
                return found + violation("expected an array, got \(Self.describe(value))")
            }
            return found + checkArray(items, context, pointer, depth: depth)
        case .object(_, let context):
            guard let object = value.objectValue else {
                return found + violation("expected an object, got \(Self.describe(value))")
            }
            return found + checkObject(object, context, pointer, depth: depth)
        case .all(let schemas, _):
            return found + schemas.flatMap { validate(value, $0, pointer, depth: depth + 1) }
        case .any(let schemas, _):
            var first: [Violation] = []
            for candidate in schemas {
                let result = validate(value, candidate, pointer, depth: depth + 1)
                if result.isEmpty { return found }
                if first.isEmpty { first = result }
            }
            return found + violation("matches none of the \(schemas.count) anyOf schemas\(Self.firstReason(first))")
        case .one(let schemas, _):
            switch discriminated(value, schemas, schema.discriminator) {
            case .chosen(let chosen):
                return found + validate(value, chosen, pointer, depth: depth + 1)
            case .unknown(let property, let name, let known):
                return found
                    + violation(
                        "discriminator \(property): \(JSONWriter().string(.string(String(name.prefix(200))))) is none of \(known.joined(separator: ", "))"
                    )
            case .none:
                break
            }
            var matching = 0
            var first: [Violation] = []
            for candidate in schemas {
                let result = validate(value, candidate, pointer, depth: depth + 1)
                if result.isEmpty { matching += 1 } else if first.isEmpty { first = result }
            }
            if matching == 1 { return found }
            if matching == 0 {
                return found + violation("matches none of the \(schemas.count) oneOf schemas\(Self.firstReason(first))")
            }
            return found + violation("matches \(matching) of the oneOf schemas; exactly one must match")
        case .not(let excluded, _):
            let result = validate(value, excluded, pointer, depth: depth + 1)
            return found + (result.isEmpty ? violation("matches the schema under `not`") : [])
        }
    }

    // MARK: - Kinds

    private func checkBounds(_ number: JSONNumber, _ context: JSONSchema.NumericContext, _ pointer: JSONPointer)
        -> [Violation]
    {
        let value = number.doubleValue
        var messages: [String] = []
        if let minimum = context.minimum {
            if minimum.exclusive ? value <= minimum.value : value < minimum.value {
                let bound = JSONNumber(minimum.value)
                messages.append("\(number) is \(minimum.exclusive ? "not above" : "below") the minimum \(bound)")
            }
        }
        if let maximum = context.maximum {
            if maximum.exclusive ? value >= maximum.value : value > maximum.value {
                let bound = JSONNumber(maximum.value)
                messages.append("\(number) is \(maximum.exclusive ? "not below" : "above") the maximum \(bound)")
            }
        }
        if let divisor = context.multipleOf, divisor > 0 {
            let quotient = value / divisor
            if abs(quotient - quotient.rounded()) > 1e-9 {
                messages.append("\(number) is not a multiple of \(JSONNumber(divisor))")
            }
        }
        return messages.map { Violation(pointer: pointer, message: $0) }
    }

    private func checkString(
        _ string: String, format: String?, _ context: JSONSchema.StringContext, _ pointer: JSONPointer
    ) -> [Violation] {
        var messages: [String] = []
        let length = string.unicodeScalars.count
        if length < context.minLength {
            messages.append("\(Self.describe(.string(string))) is shorter than \(context.minLength) characters")
        }
        if let maximum = context.maxLength, length > maximum {
            messages.append("\(Self.describe(.string(string))) is longer than \(maximum) characters")
        }
        if let pattern = context.pattern {
            if let expression = expression(pattern) {
                let range = NSRange(string.startIndex..., in: string)
                if expression.firstMatch(in: string, range: range) == nil {
                    messages.append("\(Self.describe(.string(string))) does not match the pattern \(pattern)")
                }
            } else {
                messages.append("the schema's pattern \(pattern) is not a valid regular expression")
            }
        }
        if let format, let formatPattern = Self.formats[format], let expression = expression(formatPattern) {
            let range = NSRange(string.startIndex..., in: string)
            if expression.firstMatch(in: string, range: range) == nil {
                messages.append("\(Self.describe(.string(string))) is not a valid \(format)")
            }
        }
        return messages.map { Violation(pointer: pointer, message: $0) }
    }

    private func checkArray(
        _ items: [JSONValue], _ context: JSONSchema.ArrayContext, _ pointer: JSONPointer, depth: Int
    )
        -> [Violation]
    {
        var found: [Violation] = []
        if items.count < context.minItems {
            found.append(Violation(pointer: pointer, message: "\(items.count) items, fewer than \(context.minItems)"))
        }
        if let maximum = context.maxItems, items.count > maximum {
            found.append(Violation(pointer: pointer, message: "\(items.count) items, more than \(maximum)"))
        }
        if context.uniqueItems {
            for (index, item) in items.enumerated() where items[..<index].contains(item) {
                found.append(Violation(pointer: pointer + String(index), message: "repeats an earlier item"))
            }
        }
        let prefix = context.prefixItems ?? []
        for (index, item) in items.enumerated() {
            let schema = index < prefix.count ? prefix[index] : context.items
            if let schema { found += validate(item, schema, pointer + String(index), depth: depth + 1) }
        }
        return found
    }

    private func checkObject(
        _ object: JSONObject, _ context: JSONSchema.ObjectContext, _ pointer: JSONPointer, depth: Int
    )
        -> [Violation]
    {
        var found: [Violation] = []
        for name in context.requiredProperties where object[name] == nil {
            let property = context.properties[name]
            if direction == .request && property?.readOnly == true { continue }
            if direction == .response && property?.writeOnly == true { continue }
            found.append(Violation(pointer: pointer, message: "missing the required property \"\(name)\""))
        }
        // OpenAPIKit's minProperties is at least the number of required properties, which are checked above.
        if context.minProperties > context.requiredProperties.count && object.count < context.minProperties {
            found.append(
                Violation(pointer: pointer, message: "\(object.count) properties, fewer than \(context.minProperties)"))
        }
        if let maximum = context.maxProperties, object.count > maximum {
            found.append(Violation(pointer: pointer, message: "\(object.count) properties, more than \(maximum)"))
        }
        for (key, value) in object {
            let location = pointer + key
            var described = false
            if let schema = context.properties[key] {
                described = true
                found += validate(value, schema, location, depth: depth + 1)
            }
            for (pattern, schema) in context.patternProperties {
                guard let expression = expression(pattern),
                    expression.firstMatch(in: key, range: NSRange(key.startIndex..., in: key)) != nil
                else { continue }
                described = true
                found += validate(value, schema, location, depth: depth + 1)
            }
            guard !described, let additional = context.additionalProperties else { continue }
            switch additional {
            case .a(let allowed):
                if !allowed {
                    found.append(Violation(pointer: location, message: "not a property the schema allows"))
                }
            case .b(let schema):
                found += validate(value, schema, location, depth: depth + 1)
            }
        }
        return found
    }

    /// What a `oneOf`'s discriminator says about a value.
    private enum Discriminated {
        /// The member the value's discriminator property names.
        case chosen(JSONSchema)
        /// The value names no member: the property, its value, and the values the discriminator knows.
        case unknown(property: String, value: String, known: [String])
        /// No discriminator, or the value does not carry its property as a string.
        case none
    }

    /// The `oneOf` member a discriminator names, when the schema has one and the value carries it.
    private func discriminated(
        _ value: JSONValue, _ schemas: [JSONSchema], _ discriminator: OpenAPIKit.OpenAPI.Discriminator?
    ) -> Discriminated {
        guard let discriminator, let name = value.objectValue?[discriminator.propertyName]?.stringValue else {
            return .none
        }
        let target = discriminator.mapping?[name] ?? "#/components/schemas/\(name)"
        let targetName = target.split(separator: "/").last.map(String.init)
        let chosen = schemas.first { candidate in
            guard case .reference(let reference, _) = candidate.value else { return false }
            return reference.absoluteString == target || reference.name == targetName
        }
        if let chosen { return .chosen(chosen) }
        // The names the discriminator accepts: its mapping's keys and the members' schema names.
        var known = discriminator.mapping.map { Array($0.keys) } ?? []
        for candidate in schemas {
            guard case .reference(let reference, _) = candidate.value, let member = reference.name else { continue }
            let mapped = discriminator.mapping?.contains { $0.value == reference.absoluteString } ?? false
            if !mapped, !known.contains(member) { known.append(member) }
        }
        // Without one reference among the members there is nothing to name: validate member by member.
        guard !known.isEmpty else { return .none }
        return .unknown(property: discriminator.propertyName, value: name, known: known.sorted())
    }

    // MARK: - Helpers

    private func expression(_ pattern: String) -> NSRegularExpression? {
        if let cached = expressions[pattern] { return cached }
        let compiled = try? NSRegularExpression(pattern: pattern)
        expressions[pattern] = compiled
        return compiled
    }

    /// Anchored patterns for the formats checked; others are annotations only (as JSON Schema says).
    static let formats: [String: String] = [
        "date-time": #"^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$"#,
        "date": #"^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])$"#,
        "time": #"^\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})?$"#,
        "uuid": #"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$"#,
        "email": #"^[^@\s]+@[^@\s]+\.[^@\s]+$"#,
        "ipv4": #"^((25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$"#,
    ]

    static func isIntegral(_ number: JSONNumber) -> Bool {
        if !number.literal.utf8.contains(where: {
            $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "e") || $0 == UInt8(ascii: "E")
        }) {
            return true
        }
        let value = number.doubleValue
        return value.isFinite && value == value.rounded()
    }

    /// A spec value (`enum`, `const`) as a JSON value, through its JSON encoding.
    static func json(_ value: AnyCodable) -> JSONValue {
        guard let data = try? JSONEncoder().encode(value), let parsed = try? JSONParser.parse(Array(data)) else {
            return .string(String(describing: value))
        }
        return parsed
    }

    /// A short description of a value for a message: strings quoted and cut at 40 characters.
    static func describe(_ value: JSONValue) -> String {
        switch value {
        case .string(let string):
            let shown = string.count > 40 ? String(string.prefix(40)) + "…" : string
            return "\"\(shown)\""
        case .number(let number): return number.literal
        case .bool(let bool): return String(bool)
        case .null: return "null"
        case .array, .object: return value.kindDescription
        }
    }

    private static func firstReason(_ violations: [Violation]) -> String {
        guard let first = violations.first else { return "" }
        let location = first.pointer.components.isEmpty ? "" : "\(first.pointer) "
        return " (the first: \(location)\(first.message))"
    }
}
