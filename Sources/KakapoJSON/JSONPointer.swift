/// A JSON pointer (RFC 6901) such as `/user/tags/0`: the address of one value in a document.
public struct JSONPointer: Hashable, Sendable, CustomStringConvertible {
    public let components: [String]

    /// Parses a pointer; nil unless it is empty or starts with `/`.
    public init?(_ text: String) {
        if text.isEmpty {
            components = []
            return
        }
        guard text.hasPrefix("/") else { return nil }
        components = text.dropFirst().split(separator: "/", omittingEmptySubsequences: false).map {
            String($0).replacingEvery("~1", with: "/").replacingEvery("~0", with: "~")
        }
    }

    public init(components: [String]) { self.components = components }

    public var description: String {
        components.map { "/" + $0.replacingEvery("~", with: "~0").replacingEvery("/", with: "~1") }.joined()
    }

    /// `pointer + "name"`: one level deeper.
    public static func + (pointer: JSONPointer, component: String) -> JSONPointer {
        JSONPointer(components: pointer.components + [component])
    }
}

extension JSONValue {
    /// The value at `pointer`, or nil.
    public subscript(pointer pointer: JSONPointer) -> JSONValue? {
        var current: JSONValue? = self
        for component in pointer.components {
            switch current {
            case .object(let object)?: current = object[component]
            case .array(let elements)?:
                guard let index = Int(component), elements.indices.contains(index) else { return nil }
                current = elements[index]
            default: return nil
            }
        }
        return current
    }

    /// The document with the value at `pointer` replaced by `replacement` (nil removes it); unchanged
    /// when there is no such value.
    public func replacing(_ pointer: JSONPointer, with replacement: JSONValue?) -> JSONValue {
        replacing(pointer.components[...], with: replacement)
    }

    private func replacing(_ path: ArraySlice<String>, with replacement: JSONValue?) -> JSONValue {
        guard let first = path.first else { return replacement ?? .null }
        switch self {
        case .object(var object):
            guard let child = object[first] else { return self }
            if path.count == 1 {
                object[first] = replacement
            } else {
                object[first] = child.replacing(path.dropFirst(), with: replacement)
            }
            return .object(object)
        case .array(var elements):
            guard let index = Int(first), elements.indices.contains(index) else { return self }
            if path.count == 1, replacement == nil {
                elements.remove(at: index)
            } else {
                elements[index] =
                    path.count == 1 ? replacement! : elements[index].replacing(path.dropFirst(), with: replacement)
            }
            return .array(elements)
        default:
            return self
        }
    }

    /// The pointers of every string value equal to `target`.
    public func pointers(toString target: String) -> [JSONPointer] {
        var found: [JSONPointer] = []
        collectPointers(toString: target, at: JSONPointer(components: []), into: &found)
        return found
    }

    private func collectPointers(toString target: String, at pointer: JSONPointer, into found: inout [JSONPointer]) {
        switch self {
        case .string(let value) where value == target: found.append(pointer)
        case .object(let object):
            for (key, value) in object { value.collectPointers(toString: target, at: pointer + key, into: &found) }
        case .array(let elements):
            for (index, value) in elements.enumerated() {
                value.collectPointers(toString: target, at: pointer + String(index), into: &found)
            }
        default: break
        }
    }

    /// The pointers where `other` differs from this value as JSON data (key order and number spelling do
    /// not count), at most `limit` of them, shallowest first.
    public func differences(from other: JSONValue, limit: Int = 5) -> [JSONPointer] {
        var found: [JSONPointer] = []
        collectDifferences(other, at: JSONPointer(components: []), into: &found, limit: limit)
        return found
    }

    private func collectDifferences(
        _ other: JSONValue, at pointer: JSONPointer, into found: inout [JSONPointer], limit: Int
    ) {
        guard found.count < limit else { return }
        switch (self, other) {
        case (.object(let a), .object(let b)):
            var keys = a.keys
            for key in b.keys where a[key] == nil { keys.append(key) }
            for key in keys {
                guard let x = a[key], let y = b[key] else {
                    if found.count < limit { found.append(pointer + key) }
                    continue
                }
                x.collectDifferences(y, at: pointer + key, into: &found, limit: limit)
            }
        case (.array(let a), .array(let b)) where a.count == b.count:
            for (index, pair) in zip(a, b).enumerated() {
                pair.0.collectDifferences(pair.1, at: pointer + String(index), into: &found, limit: limit)
            }
        default:
            if !isEquivalent(to: other) { found.append(pointer) }
        }
    }
}

extension String {
    func replacingEvery(_ target: String, with replacement: String) -> String {
        guard contains(target) else { return self }
        return split(separator: target, omittingEmptySubsequences: false).joined(separator: replacement)
    }
}
