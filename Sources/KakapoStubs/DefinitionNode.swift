import KakapoJSON

/// A value of a routes definition together with its key path, with typed accessors whose errors name
/// that path. Objects are checked for unknown keys, so a misspelled key is an error, not a silent no-op.
struct DefinitionNode {
    let value: JSONValue
    let path: [JSONPathComponent]

    init(_ value: JSONValue, path: [JSONPathComponent] = []) {
        self.value = value
        self.path = path
    }

    func error(_ message: String) -> RoutesError { RoutesError(path: path, message: message) }

    /// The members of an object, refusing keys outside `allowed`.
    func object(allowed: [String]) throws(RoutesError) -> DefinitionObject {
        guard case .object(let members) = value else {
            throw error("expected an object, found \(value.kindDescription)")
        }
        for key in members.keys where !allowed.contains(key) {
            throw RoutesError(
                path: path + [.key(key)],
                message: "unknown key; expected one of " + allowed.joined(separator: ", "))
        }
        return DefinitionObject(members: members, path: path)
    }

    /// The members of an object whose keys the user chooses (header names, pointers), in order.
    func entries() throws(RoutesError) -> [(String, DefinitionNode)] {
        guard case .object(let members) = value else {
            throw error("expected an object, found \(value.kindDescription)")
        }
        return members.map { ($0.key, DefinitionNode($0.value, path: path + [.key($0.key)])) }
    }

    func array() throws(RoutesError) -> [DefinitionNode] {
        guard case .array(let elements) = value else {
            throw error("expected an array, found \(value.kindDescription)")
        }
        return elements.enumerated().map { DefinitionNode($0.element, path: path + [.index($0.offset)]) }
    }

    func string() throws(RoutesError) -> String {
        guard case .string(let text) = value else { throw error("expected a string, found \(value.kindDescription)") }
        return text
    }

    func bool() throws(RoutesError) -> Bool {
        guard case .bool(let flag) = value else {
            throw error("expected true or false, found \(value.kindDescription)")
        }
        return flag
    }

    /// A finite number (a literal too large for a double, such as `1e400`, is refused).
    func number() throws(RoutesError) -> Double {
        guard case .number(let number) = value, let double = Double(number.literal), double.isFinite else {
            throw error("expected a number, found \(value.kindDescription)")
        }
        return double
    }

    func integer(in range: ClosedRange<Int>, _ what: String) throws(RoutesError) -> Int {
        guard case .number(let number) = value, let integer = number.intValue, range.contains(integer) else {
            throw error("expected \(what)")
        }
        return integer
    }

    /// A scalar as the text a header or query value would carry: strings as they are, numbers as written,
    /// booleans as `true`/`false`.
    func scalarText() throws(RoutesError) -> String {
        switch value {
        case .string(let text): return text
        case .number(let number): return number.literal
        case .bool(let flag): return flag ? "true" : "false"
        default: throw error("expected a string, found \(value.kindDescription)")
        }
    }
}

/// The members of one object of a routes definition.
struct DefinitionObject {
    let members: JSONObject
    let path: [JSONPathComponent]

    subscript(key: String) -> DefinitionNode? {
        members[key].map { DefinitionNode($0, path: path + [.key(key)]) }
    }

    func has(_ key: String) -> Bool { members[key] != nil }

    func error(_ message: String) -> RoutesError { RoutesError(path: path, message: message) }

    /// The one member of `keys` present; an error when none or several are.
    func exactlyOne(of keys: [String], what: String) throws(RoutesError) -> (String, DefinitionNode) {
        let present = keys.filter(has)
        guard present.count == 1, let key = present.first else {
            throw error(
                present.isEmpty
                    ? "\(what) needs one of " + keys.joined(separator: ", ")
                    : "\(what) takes only one of " + present.joined(separator: ", "))
        }
        return (key, self[key]!)
    }
}
