/// Reads a google.protobuf.FileDescriptorSet with the wire reader and a hand-written schema of the
/// descriptor messages (descriptor.proto's field numbers), into a `ProtoRegistry`. Errors say where:
/// `file "demo.proto": message "demo.Req": field "id": a label of 9 (1 optional, 2 required, 3 repeated)`.
struct ProtoDescriptorSetReader {
    private let bytes: [UInt8]
    private var registry = ProtoRegistry()
    /// Each message type's source file, to name both files when a type is defined twice.
    private var fileOfType: [String: String] = [:]
    /// Type names as written, with the scope to resolve them in, until every type is known.
    private var pendingTypeNames: [String: [Int: (name: String, scope: String, type: UInt64)]] = [:]
    private var pendingMethods: [(method: ProtoMethod, scope: String, file: String)] = []

    private init(bytes: [UInt8]) { self.bytes = bytes }

    /// The registry of the descriptor set's files plus the well-known types KakapoProtobuf knows itself.
    static func read(_ bytes: [UInt8]) throws(ProtoError) -> ProtoRegistry {
        var reader = ProtoDescriptorSetReader(bytes: bytes)
        var files: Set<String> = []
        var wire = ProtoWireReader(bytes: bytes)
        var index = 0
        while let field = try within("descriptor set", { () throws(ProtoError) in try wire.readField() }) {
            guard field.number == 1 else { continue }
            guard case .lengthDelimited(let range) = field.value else {
                throw ProtoError("descriptor set: field 1 (file) has wire type \(field.value.wireType), expected 2")
            }
            try reader.readFile(range, index: index, seen: &files)
            index += 1
        }
        ProtoWellKnownTypes.register(into: &reader.registry)
        try reader.resolve()
        return reader.registry
    }

    // MARK: Files, messages, enums, services

    private mutating func readFile(_ range: Range<Int>, index: Int, seen: inout Set<String>) throws(ProtoError) {
        var name = "#\(index)"
        var package = ""
        var syntax = ""
        var messages: [Range<Int>] = []
        var enums: [Range<Int>] = []
        var services: [Range<Int>] = []
        try Self.within("file \(name)") { () throws(ProtoError) in
            try forEachField(range) { (number, value) throws(ProtoError) in
                switch number {
                case 1: name = try string(value, "name")
                case 2: package = try string(value, "package")
                case 4: messages.append(try lengthDelimited(value, "message_type"))
                case 5: enums.append(try lengthDelimited(value, "enum_type"))
                case 6: services.append(try lengthDelimited(value, "service"))
                case 12: syntax = try string(value, "syntax")
                case 14: if syntax.isEmpty { syntax = "editions" }
                default: break
                }
            }
        }
        // A set made by concatenating two sets can hold a file twice; its second copy adds nothing.
        guard seen.insert(name).inserted else { return }
        let file = name
        try Self.within("file \"\(file)\"") { () throws(ProtoError) in
            for message in messages { try readMessage(message, scope: package, syntax: syntax, file: file, depth: 0) }
            for enumeration in enums { try readEnum(enumeration, scope: package, syntax: syntax, file: file) }
            for service in services { try readService(service, package: package, file: file) }
        }
    }

    private mutating func readMessage(_ range: Range<Int>, scope: String, syntax: String, file: String, depth: Int)
        throws(ProtoError)
    {
        var name = ""
        var fields: [Range<Int>] = []
        var nested: [Range<Int>] = []
        var enums: [Range<Int>] = []
        var isMapEntry = false
        var oneofCount = 0
        try forEachField(range) { (number, value) throws(ProtoError) in
            switch number {
            case 1: name = try string(value, "name")
            case 2: fields.append(try lengthDelimited(value, "field"))
            case 3: nested.append(try lengthDelimited(value, "nested_type"))
            case 4: enums.append(try lengthDelimited(value, "enum_type"))
            case 7:
                try forEachField(try lengthDelimited(value, "options")) { (number, value) throws(ProtoError) in
                    if number == 7 { isMapEntry = try varint(value, "options.map_entry") != 0 }
                }
            case 8:
                _ = try lengthDelimited(value, "oneof_decl")
                oneofCount += 1
            default: break
            }
        }
        guard Self.isIdentifier(name) else { throw ProtoError("a message named \"\(name)\" (not an identifier)") }
        let fullName = scope.isEmpty ? name : "\(scope).\(name)"
        try Self.within("message \"\(fullName)\"") { () throws(ProtoError) in
            if let other = fileOfType[fullName] ?? (registry.enums[fullName] != nil ? "an enum" : nil) {
                throw ProtoError("defined twice (also in \(other))")
            }
            fileOfType[fullName] = file
            var parsed: [ProtoField] = []
            var numbers: Set<Int> = []
            for field in fields {
                let (field, typeName) = try readField(field, syntax: syntax, oneofCount: oneofCount)
                guard numbers.insert(field.number).inserted else {
                    throw ProtoError("field number \(field.number) used twice")
                }
                if let typeName { pendingTypeNames[fullName, default: [:]][field.number] = typeName }
                parsed.append(field)
            }
            registry.messages[fullName] = ProtoMessageType(fullName: fullName, fields: parsed, isMapEntry: isMapEntry)
            guard nested.isEmpty || depth < ProtoLimits.maximumDepth else {
                throw ProtoError("message types nested deeper than \(ProtoLimits.maximumDepth) levels")
            }
            for message in nested {
                try readMessage(message, scope: fullName, syntax: syntax, file: file, depth: depth + 1)
            }
            for enumeration in enums { try readEnum(enumeration, scope: fullName, syntax: syntax, file: file) }
        }
    }

    /// A field, and its type name as written when it has one (resolved once every type is read).
    private func readField(_ range: Range<Int>, syntax: String, oneofCount: Int) throws(ProtoError)
        -> (ProtoField, (name: String, scope: String, type: UInt64)?)
    {
        var name = ""
        var jsonName: String?
        var number: UInt64 = 0
        var label: UInt64 = 1
        var type: UInt64 = 0
        var typeName = ""
        var packed: Bool?
        var oneofIndex: UInt64?
        var proto3Optional = false
        try forEachField(range) { (fieldNumber, value) throws(ProtoError) in
            switch fieldNumber {
            case 1: name = try string(value, "name")
            case 3: number = try varint(value, "number")
            case 4: label = try varint(value, "label")
            case 5: type = try varint(value, "type")
            case 6: typeName = try string(value, "type_name")
            case 8:
                try forEachField(try lengthDelimited(value, "options")) { (number, value) throws(ProtoError) in
                    if number == 2 { packed = try varint(value, "options.packed") != 0 }
                }
            case 9: oneofIndex = try varint(value, "oneof_index")
            case 10: jsonName = try string(value, "json_name")
            case 17: proto3Optional = try varint(value, "proto3_optional") != 0
            default: break
            }
        }
        return try Self.within("field \"\(name)\"") { () throws(ProtoError) in
            guard Self.isIdentifier(name) else { throw ProtoError("not an identifier") }
            guard number >= 1, number <= UInt64(ProtoWireReader.maximumFieldNumber) else {
                throw ProtoError("field number \(number) (field numbers run from 1 to 536870911)")
            }
            guard (1...3).contains(label) else {
                throw ProtoError("a label of \(label) (1 optional, 2 required, 3 repeated)")
            }
            if let oneofIndex, oneofIndex >= UInt64(oneofCount) {
                throw ProtoError("oneof_index \(oneofIndex) but the message declares \(oneofCount) oneofs")
            }
            // A missing type (0) with a type name is legal in descriptors: the name says enum or message.
            guard type == 0 && !typeName.isEmpty || (1...18).contains(type) else {
                throw ProtoError("a type of \(type) (FieldDescriptorProto.Type runs from 1 to 18)")
            }
            if (type == 10 || type == 11 || type == 14) && typeName.isEmpty {
                throw ProtoError("a message, group or enum field without type_name")
            }
            let kind = ProtoFieldKind(descriptorType: type == 0 ? 11 : type, typeName: typeName) ?? .int32
            let isRepeated = label == 3
            let hasPresence: Bool
            let isPacked: Bool
            switch syntax {
            case "proto3":
                hasPresence = !isRepeated && (proto3Optional || oneofIndex != nil || kind.isMessageLike)
                isPacked = isRepeated && kind.isPackable && (packed ?? true)
            case "editions":
                hasPresence = !isRepeated
                isPacked = isRepeated && kind.isPackable && (packed ?? true)
            default:
                hasPresence = !isRepeated
                isPacked = isRepeated && kind.isPackable && (packed ?? false)
            }
            let field = ProtoField(
                name: name, jsonName: jsonName ?? ProtoField.jsonName(of: name), number: Int(number),
                isRepeated: isRepeated, kind: kind, oneofIndex: oneofIndex.map { Int($0) }, hasPresence: hasPresence,
                isPacked: isPacked)
            return (field, typeName.isEmpty ? nil : (typeName, "", type))
        }
    }

    private mutating func readEnum(_ range: Range<Int>, scope: String, syntax: String, file: String)
        throws(ProtoError)
    {
        var name = ""
        var values: [(name: String, number: Int32)] = []
        try forEachField(range) { (number, value) throws(ProtoError) in
            switch number {
            case 1: name = try string(value, "name")
            case 2:
                var valueName = ""
                var valueNumber: UInt64 = 0
                try forEachField(try lengthDelimited(value, "value")) { (number, value) throws(ProtoError) in
                    if number == 1 { valueName = try string(value, "value.name") }
                    if number == 2 { valueNumber = try varint(value, "value.number") }
                }
                // int32 on the wire: negative numbers are sign-extended to 64 bits.
                values.append((valueName, Int32(truncatingIfNeeded: valueNumber)))
            default: break
            }
        }
        guard Self.isIdentifier(name) else { throw ProtoError("an enum named \"\(name)\" (not an identifier)") }
        let fullName = scope.isEmpty ? name : "\(scope).\(name)"
        if registry.enums[fullName] != nil || fileOfType[fullName] != nil {
            throw ProtoError("enum \"\(fullName)\": defined twice")
        }
        registry.enums[fullName] = ProtoEnumType(
            fullName: fullName, values: values, isClosed: syntax == "proto2" || syntax.isEmpty)
    }

    private mutating func readService(_ range: Range<Int>, package: String, file: String) throws(ProtoError) {
        var name = ""
        var methods: [Range<Int>] = []
        try forEachField(range) { (number, value) throws(ProtoError) in
            if number == 1 { name = try string(value, "name") }
            if number == 2 { methods.append(try lengthDelimited(value, "method")) }
        }
        guard Self.isIdentifier(name) else { throw ProtoError("a service named \"\(name)\" (not an identifier)") }
        let service = package.isEmpty ? name : "\(package).\(name)"
        for range in methods {
            var method = ""
            var input = ""
            var output = ""
            var clientStreaming = false
            var serverStreaming = false
            try Self.within("service \"\(service)\"") { () throws(ProtoError) in
                try forEachField(range) { (number, value) throws(ProtoError) in
                    switch number {
                    case 1: method = try string(value, "method.name")
                    case 2: input = try string(value, "method.input_type")
                    case 3: output = try string(value, "method.output_type")
                    case 5: clientStreaming = try varint(value, "method.client_streaming") != 0
                    case 6: serverStreaming = try varint(value, "method.server_streaming") != 0
                    default: break
                    }
                }
                guard Self.isIdentifier(method), !input.isEmpty, !output.isEmpty else {
                    throw ProtoError("a method \"\(method)\" without a name, input_type or output_type")
                }
            }
            pendingMethods.append(
                (
                    ProtoMethod(
                        service: service, name: method, inputType: input, outputType: output,
                        clientStreaming: clientStreaming, serverStreaming: serverStreaming), package, file
                ))
        }
    }

    // MARK: Resolving type names

    /// Resolves every field's and method's type name now that all types are known, and marks map fields.
    private mutating func resolve() throws(ProtoError) {
        for (typeName, pending) in pendingTypeNames {
            guard var type = registry.messages[typeName] else { continue }
            let registry = self.registry
            try Self.within("message \"\(typeName)\"") { () throws(ProtoError) in
                try type.updateFields { (field) throws(ProtoError) in
                    guard let written = pending[field.number] else { return }
                    try Self.within("field \"\(field.name)\"") { () throws(ProtoError) in
                        let name = Self.resolve(written.name, scope: typeName, in: registry)
                        let isEnum = registry.enums[name] != nil
                        let isMessage = registry.messages[name] != nil
                        switch field.kind {
                        case .enumeration where isMessage, .message where isEnum && written.type != 0,
                            .group where isEnum:
                            throw ProtoError("type \(name) is the wrong kind (an \(isEnum ? "enum" : "message"))")
                        case .enumeration: field.kind = .enumeration(name)
                        case .group: field.kind = .group(name)
                        case .message where isEnum: field.kind = .enumeration(name)
                        case .message: field.kind = .message(name)
                        default: break
                        }
                        if written.type == 0, !field.isRepeated, isEnum { field.hasPresence = field.oneofIndex != nil }
                        if field.isRepeated, case .message(let entry) = field.kind,
                            let entryType = registry.messages[entry], entryType.isMapEntry
                        {
                            guard entryType.field(number: 1) != nil, entryType.field(number: 2) != nil else {
                                throw ProtoError("map entry \(entry) lacks its key (1) or value (2) field")
                            }
                            field.isMap = true
                        }
                    }
                }
            }
            self.registry.messages[typeName] = type
        }
        for pending in pendingMethods {
            let method = pending.method
            registry.methods[method.path] = ProtoMethod(
                service: method.service, name: method.name,
                inputType: Self.resolve(method.inputType, scope: pending.scope, in: registry),
                outputType: Self.resolve(method.outputType, scope: pending.scope, in: registry),
                clientStreaming: method.clientStreaming, serverStreaming: method.serverStreaming)
        }
    }

    /// A type name as protoc resolves it: fully qualified when it starts with a dot, otherwise looked up
    /// from the innermost scope outwards. Unknown names stay as written (without the dot); using them
    /// fails later with a message that names them.
    private static func resolve(_ name: String, scope: String, in registry: ProtoRegistry) -> String {
        if name.hasPrefix(".") { return String(name.dropFirst()) }
        var components = scope.split(separator: ".").map(String.init)
        while true {
            let candidate = (components + [name]).joined(separator: ".")
            if registry.messages[candidate] != nil || registry.enums[candidate] != nil { return candidate }
            if components.isEmpty { return name }
            components.removeLast()
        }
    }

    // MARK: Wire helpers

    private func forEachField(_ range: Range<Int>, _ body: (Int, ProtoWireValue) throws(ProtoError) -> Void)
        throws(ProtoError)
    {
        var reader = ProtoWireReader(bytes: bytes, range: range)
        while let field = try reader.readField() {
            switch field.value {
            case .startGroup: try reader.skipGroup(number: field.number, depth: 0)
            case .endGroup: throw ProtoError("an end-group tag without a group at byte \(reader.index)")
            default:
                try Self.within("field \(field.number)") { () throws(ProtoError) in try body(field.number, field.value)
                }
            }
        }
    }

    private func lengthDelimited(_ value: ProtoWireValue, _ what: String) throws(ProtoError) -> Range<Int> {
        guard case .lengthDelimited(let range) = value else {
            throw ProtoError("\(what) has wire type \(value.wireType), expected 2")
        }
        return range
    }

    private func string(_ value: ProtoWireValue, _ what: String) throws(ProtoError) -> String {
        let range = try lengthDelimited(value, what)
        guard let string = String(validating: bytes[range], as: UTF8.self) else {
            throw ProtoError("\(what) is not UTF-8")
        }
        return string
    }

    private func varint(_ value: ProtoWireValue, _ what: String) throws(ProtoError) -> UInt64 {
        guard case .varint(let number) = value else {
            throw ProtoError("\(what) has wire type \(value.wireType), expected 0")
        }
        return number
    }

    private static func isIdentifier(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= 1024
            && name.utf8.allSatisfy {
                $0 == UInt8(ascii: "_") || $0 >= 0x30 && $0 <= 0x39 || ($0 | 0x20) >= 0x61 && ($0 | 0x20) <= 0x7A
            }
    }

    /// Runs `body`, prefixing its error with where it happened.
    private static func within<T>(_ context: String, _ body: () throws(ProtoError) -> T) throws(ProtoError) -> T {
        do {
            return try body()
        } catch {
            // Deeply nested descriptors would otherwise make a message as long as the names of every level.
            guard error.message.utf8.count < 2000 else { throw error }
            throw ProtoError("\(context): \(error.message)")
        }
    }
}

extension ProtoFieldKind {
    /// True for messages and groups, which always have presence.
    var isMessageLike: Bool {
        switch self {
        case .message, .group: true
        default: false
        }
    }
}
